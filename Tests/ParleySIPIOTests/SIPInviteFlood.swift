import Glibc
import ParleyNetCore
import ParleySIP
import ParleySIPIO
import ParleyWireCore
import Testing

// Shared by a link with Tests/ParleyEndToEndTests, which floods a running parleyd.

/// A flood of INVITEs from one source address (127.0.0.1) while another (127.0.0.2) sends
/// OPTIONS now and then: the flood must get no more answers than its source's limit
/// allows (the burst, then the rate; 503s within their own bucket), and the other
/// source an answer to every OPTIONS, each a 200.
enum SIPInviteFlood {
    /// What the flood got.
    struct Outcome {
        /// INVITEs answered by the server (403 from the stateless responder).
        var answered = 0
        /// INVITEs refused 503 for the rate.
        var refused = 0
        /// Seconds from the first INVITE to the last answer.
        var elapsed = 0.0
    }

    /// Floods `server` with `size` INVITEs and checks the answers against `limit`.
    @discardableResult
    static func run(against server: SocketAddress, limit: SIPSourceRateLimit, size: Int = 600) throws -> Outcome {
        let flooder = try UDPPeer(bindingTo: SocketAddress(ipv4: 127, 0, 0, 1, port: 0))
        // Another source address on the loopback network.
        let caller = try UDPPeer(bindingTo: SocketAddress(ipv4: 127, 0, 0, 2, port: 0))
        var pending: Set<String> = []
        let started = ContinuousClock.now
        let tag = flooder.address.port
        for index in 0..<size {
            let invite = options(callID: "flood-\(tag)-\(index)", via: "\(flooder.address)").replacingOptions(with: "INVITE")
            try flooder.send(invite, to: server)
            if index % 30 == 0 {
                let callID = "caller-\(tag)-\(index)"
                pending.insert(callID)
                try caller.send(options(callID: callID, via: "\(caller.address)"), to: server)
            }
            // Paced a little, so the kernel's buffers, not the server, are never the limit.
            if index % 50 == 49 { usleep(1_000) }
        }
        // The other source gets every answer, each 200; a lost datagram is sent again, as
        // a client's retransmission timer would.
        var attempts = 0
        while !pending.isEmpty && attempts < 4 {
            while let message = try caller.receiveMessage(timeout: .milliseconds(500)) {
                #expect(message.statusCode == 200)
                if let callID = try? message.callID() { pending.remove(callID) }
                if pending.isEmpty { break }
            }
            attempts += 1
            for callID in pending {
                try caller.send(options(callID: callID, via: "\(caller.address)"), to: server)
            }
        }
        #expect(pending.isEmpty, "unanswered: \(pending.sorted())")
        // The flood's answers, until a quiet moment.
        var outcome = Outcome()
        while let message = try flooder.receiveMessage(timeout: .milliseconds(300)) {
            switch message.statusCode {
            case 403: outcome.answered += 1
            case 503:
                outcome.refused += 1
                #expect(message.headers["retry-after"] == ["\(limit.retryAfterSeconds)"])
            default: Issue.record("unexpected \(message.startLine)")
            }
        }
        outcome.elapsed = started.duration(to: .now).fractionalSeconds
        let elapsed = outcome.elapsed
        // At most the burst and the rate over the whole time; the same for the 503s.
        #expect(outcome.answered >= limit.burst)
        #expect(Double(outcome.answered) <= Double(limit.burst) + limit.requestsPerSecond * elapsed + 1,
                "\(outcome.answered) INVITEs answered in \(elapsed) s")
        #expect(outcome.refused >= 1)
        #expect(Double(outcome.refused) <= Double(limit.refusalBurst) + limit.refusalsPerSecond * elapsed + 1,
                "\(outcome.refused) refusals in \(elapsed) s")
        #expect(elapsed < 10)
        return outcome
    }
}
