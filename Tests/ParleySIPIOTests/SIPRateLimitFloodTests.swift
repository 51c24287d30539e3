import Glibc
import ParleyNetCore
import ParleySIP
import ParleySIPIO
import ParleyWireCore
import Testing

/// A flood of INVITEs from one source against the default limit (50 requests/s, a burst
/// of 100; 503s at 5/s, a burst of 10): the flood gets no more than that, while another
/// source is answered throughout.
@Suite struct SIPRateLimitFloodTests {
    @Test func aFloodFromOneSourceIsLimitedWhileAnotherIsServed() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let flooder = try UDPPeer(bindingTo: SocketAddress(ipv4: 127, 0, 0, 1, port: 0))
        // Another source address on the loopback network.
        let caller = try UDPPeer(bindingTo: SocketAddress(ipv4: 127, 0, 0, 2, port: 0))
        let floodSize = 600
        var pending: Set<String> = []
        let started = ContinuousClock.now
        for index in 0..<floodSize {
            let invite = options(callID: "flood-\(index)", via: "127.0.0.1:\(flooder.address.port)").replacingOptions(with: "INVITE")
            try flooder.send(invite, to: server.localAddress)
            if index % 30 == 0 {
                let callID = "caller-\(index)"
                pending.insert(callID)
                try caller.send(options(callID: callID, via: "127.0.0.2:\(caller.address.port)"), to: server.localAddress)
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
                try caller.send(options(callID: callID, via: "127.0.0.2:\(caller.address.port)"), to: server.localAddress)
            }
        }
        #expect(pending.isEmpty, "unanswered: \(pending.sorted())")
        // The flood: its answers until a quiet moment.
        var refused = 0
        var answered = 0
        while let message = try flooder.receiveMessage(timeout: .milliseconds(300)) {
            switch message.statusCode {
            case 403: answered += 1
            case 503:
                refused += 1
                #expect(message.headers["retry-after"] == ["5"])
            default: Issue.record("unexpected \(message.startLine)")
            }
        }
        let elapsed = started.duration(to: .now).fractionalSeconds
        // At most the burst and the rate over the whole time; the same for the 503s.
        #expect(answered >= 100)
        #expect(Double(answered) <= 100 + 50 * elapsed + 1, "\(answered) INVITEs answered in \(elapsed) s")
        #expect(refused >= 1)
        #expect(Double(refused) <= 10 + 5 * elapsed + 1, "\(refused) refusals in \(elapsed) s")
        let statistics = server.statistics
        #expect(statistics.rateLimitRefused == refused)
        #expect(statistics.rateLimitDropped >= floodSize - answered - refused - 5)
        #expect(statistics.rateLimitDropped > 0)
        // Bounded in time too: well under the flood's own rate.
        #expect(elapsed < 10)
    }
}
