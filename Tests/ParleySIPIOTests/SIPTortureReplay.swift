import ParleyNetCore
import ParleySIP
import ParleySIPIO
import Testing

// Shared by a link with Tests/ParleyEndToEndTests, which replays the same against a
// running parleyd, as TortureMessages.swift is shared with Tests/ParleySIPTests.

/// Every RFC 4475 and RFC 5118 message replayed to a running SIP server over UDP and over
/// TCP: each must be answered with the status ParleySIP's parsing and validation and the
/// stateless responder give it, or draw no answer when they say drop (or it is an ACK or
/// a response), and the server must answer an OPTIONS right after every one of them.
enum SIPTortureReplay {
    /// Every torture message, named by its section.
    static let messages: [(name: String, bytes: [UInt8])] = [
        ("RFC 4475 §3.1.1.1 wsinv", RFC4475.wsinv), ("RFC 4475 §3.1.1.2 intmeth", RFC4475.intmeth),
        ("RFC 4475 §3.1.1.3 esc01", RFC4475.esc01), ("RFC 4475 §3.1.1.4 escnull", RFC4475.escnull),
        ("RFC 4475 §3.1.1.5 esc02", RFC4475.esc02), ("RFC 4475 §3.1.1.6 lwsdisp", RFC4475.lwsdisp),
        ("RFC 4475 §3.1.1.7 longreq", RFC4475.longreq), ("RFC 4475 §3.1.1.8 dblreq", RFC4475.dblreq),
        ("RFC 4475 §3.1.1.9 semiuri", RFC4475.semiuri), ("RFC 4475 §3.1.1.10 transports", RFC4475.transports),
        ("RFC 4475 §3.1.1.11 mpart01", RFC4475.mpart01), ("RFC 4475 §3.1.1.12 unreason", RFC4475.unreason),
        ("RFC 4475 §3.1.1.13 noreason", RFC4475.noreason),
        ("RFC 4475 §3.1.2.1 badinv01", RFC4475.badinv01), ("RFC 4475 §3.1.2.2 clerr", RFC4475.clerr),
        ("RFC 4475 §3.1.2.3 ncl", RFC4475.ncl), ("RFC 4475 §3.1.2.4 scalar02", RFC4475.scalar02),
        ("RFC 4475 §3.1.2.5 scalarlg", RFC4475.scalarlg), ("RFC 4475 §3.1.2.6 quotbal", RFC4475.quotbal),
        ("RFC 4475 §3.1.2.7 ltgtruri", RFC4475.ltgtruri), ("RFC 4475 §3.1.2.8 lwsruri", RFC4475.lwsruri),
        ("RFC 4475 §3.1.2.9 lwsstart", RFC4475.lwsstart), ("RFC 4475 §3.1.2.10 trws", RFC4475.trws),
        ("RFC 4475 §3.1.2.11 escruri", RFC4475.escruri), ("RFC 4475 §3.1.2.12 baddate", RFC4475.baddate),
        ("RFC 4475 §3.1.2.13 regbadct", RFC4475.regbadct), ("RFC 4475 §3.1.2.14 badaspec", RFC4475.badaspec),
        ("RFC 4475 §3.1.2.15 baddn", RFC4475.baddn), ("RFC 4475 §3.1.2.16 badvers", RFC4475.badvers),
        ("RFC 4475 §3.1.2.17 mismatch01", RFC4475.mismatch01), ("RFC 4475 §3.1.2.18 mismatch02", RFC4475.mismatch02),
        ("RFC 4475 §3.1.2.19 bigcode", RFC4475.bigcode),
        ("RFC 4475 §3.2.1 badbranch", RFC4475.badbranch),
        ("RFC 4475 §3.3.1 insuf", RFC4475.insuf), ("RFC 4475 §3.3.2 unkscm", RFC4475.unkscm),
        ("RFC 4475 §3.3.3 novelsc", RFC4475.novelsc), ("RFC 4475 §3.3.4 unksm2", RFC4475.unksm2),
        ("RFC 4475 §3.3.5 bext01", RFC4475.bext01), ("RFC 4475 §3.3.6 invut", RFC4475.invut),
        ("RFC 4475 §3.3.7 regaut01", RFC4475.regaut01), ("RFC 4475 §3.3.8 multi01", RFC4475.multi01),
        ("RFC 4475 §3.3.9 mcl01", RFC4475.mcl01), ("RFC 4475 §3.3.10 bcast", RFC4475.bcast),
        ("RFC 4475 §3.3.11 zeromf", RFC4475.zeromf), ("RFC 4475 §3.3.12 cparam01", RFC4475.cparam01),
        ("RFC 4475 §3.3.13 cparam02", RFC4475.cparam02), ("RFC 4475 §3.3.14 regescrt", RFC4475.regescrt),
        ("RFC 4475 §3.3.15 sdp01", RFC4475.sdp01),
        ("RFC 4475 §3.4.1 inv2543", RFC4475.inv2543),
        ("RFC 5118 §4.1 ipv6-good", RFC5118.ipv6Good), ("RFC 5118 §4.2 ipv6-bad", RFC5118.ipv6Bad),
        ("RFC 5118 §4.3 port-ambiguous", RFC5118.portAmbiguous), ("RFC 5118 §4.4 port-unambiguous", RFC5118.portUnambiguous),
        ("RFC 5118 §4.5 via-received-bracketed", RFC5118.viaReceivedBracketed),
        ("RFC 5118 §4.5 via-received-bare", RFC5118.viaReceivedBare),
        ("RFC 5118 §4.6 ipv6-in-sdp", RFC5118.ipv6InSDP), ("RFC 5118 §4.7 multiple-addresses", RFC5118.multipleAddressesInHeaders),
        ("RFC 5118 §4.8 multiple-addresses-in-sdp", RFC5118.multipleAddressesInSDP),
        ("RFC 5118 §4.9 ipv4-mapped", RFC5118.ipv4MappedIPv6),
        ("RFC 5118 §4.10 three-colons", RFC5118.threeColons), ("RFC 5118 §4.10 two-colons", RFC5118.twoColons),
    ]

    /// The status of the answer a request gets after it parsed: the transport's own
    /// (validation) or the stateless responder's; nil for no answer.
    static func answer(to message: SIPMessage) -> Int? {
        do {
            try message.validate()
        } catch {
            guard case .respond(let code, _) = error.disposition else { return nil }
            return code
        }
        return SIPStatelessResponder.response(to: message)?.statusCode
    }

    static func answer(to error: SIPError) -> Int? {
        guard case .respond(let code, _) = error.disposition else { return nil }
        return code
    }

    /// What the server must answer to `bytes` as one datagram.
    static func expectedOverUDP(_ bytes: [UInt8]) -> Int? {
        do {
            return answer(to: try SIPMessage(datagram: bytes))
        } catch {
            return answer(to: error)
        }
    }

    /// What the server must do with `bytes` on a stream: the statuses of its answers, in
    /// order, whether the probe behind them (`probeCallID`) is answered, and whether the
    /// connection is closed.
    static func expectedOverTCP(_ bytes: [UInt8], probeCallID: String) -> (statuses: [Int], probeAnswered: Bool, closes: Bool) {
        var framer = SIPStreamFramer()
        var rest = bytes[...]
        var statuses: [Int] = []
        while true {
            let frame: SIPStreamFrame
            do {
                frame = try framer.next(in: rest)
            } catch {
                if let status = answer(to: error) { statuses.append(status) }
                return (statuses, false, true)
            }
            switch frame {
            case .message(let message, let consumed):
                rest = rest.dropFirst(consumed)
                if (try? message.callID()) == probeCallID {
                    return (statuses, true, false)
                }
                if message.isRequest, let status = answer(to: message) { statuses.append(status) }
            case .invalidMessage(let error, let consumed):
                rest = rest.dropFirst(consumed)
                if let status = answer(to: error) { statuses.append(status) }
                if error.closesConnection { return (statuses, false, true) }
            case .ping(let consumed), .pong(let consumed):
                rest = rest.dropFirst(consumed)
            case .needMoreBytes:
                return (statuses, false, false)
            }
        }
    }

    /// Sends each message to `server` in a datagram, then an OPTIONS, and checks the
    /// answers: the message's as `expectedOverUDP` says, then 200 for the OPTIONS. The
    /// server must answer at the packet source (`rport`, or forced): the messages' Vias
    /// name other hosts.
    static func replayOverUDP(to server: SocketAddress, from local: SocketAddress = .ipv4Loopback(port: 0)) throws {
        let peer = try UDPPeer(bindingTo: local)
        for (index, (name, bytes)) in messages.enumerated() {
            let probe = "probe-udp-\(index)"
            try peer.send(bytes, to: server)
            try peer.send(options(callID: probe, via: "\(peer.address)"), to: server)
            // Answers come back in order: whatever precedes the probe's answers the message.
            var statuses: [Int] = []
            var probeAnswered = false
            while !probeAnswered, let message = try peer.receiveMessage() {
                // A 200 for the probe's Call-ID is its answer; a message that swallowed the
                // probe's bytes is answered with the probe's Call-ID too, but not 200.
                if (try? message.callID()) == probe, message.statusCode == 200 {
                    probeAnswered = true
                } else if let status = message.statusCode {
                    statuses.append(status)
                }
            }
            #expect(probeAnswered, "\(name): no answer to the OPTIONS after it")
            let expected = expectedOverUDP(bytes)
            #expect(statuses == (expected.map { [$0] } ?? []), "\(name) over UDP")
        }
    }

    /// Sends each message on a connection of its own, an OPTIONS right behind it, and
    /// checks the answers, the OPTIONS's and the close as `expectedOverTCP` says; then
    /// that a new connection is served.
    static func replayOverTCP(to server: SocketAddress) throws {
        for (index, (name, bytes)) in messages.enumerated() {
            let probe = "probe-tcp-\(index)"
            let probeBytes = options(callID: probe, via: "192.0.2.1:5060", transport: "TCP")
            let expected = expectedOverTCP(bytes + probeBytes, probeCallID: probe)
            let peer = try TCPPeer(connectingTo: server)
            try peer.write(bytes + probeBytes)
            var statuses: [Int] = []
            var probeAnswered = false
            var closed = false
            // Bounded: the probe's answer, the server's close, or a quiet second when the
            // message waits for body bytes that never come.
            reading: while !probeAnswered {
                switch try peer.next(timeout: expected.probeAnswered || expected.closes ? .seconds(5) : .seconds(1)) {
                case .message(let message):
                    if (try? message.callID()) == probe, message.statusCode == 200 {
                        probeAnswered = true
                    } else if let status = message.statusCode {
                        statuses.append(status)
                    }
                case .keepalive:
                    continue
                case .closed:
                    closed = true
                    break reading
                case .timedOut:
                    break reading
                }
            }
            #expect(statuses == expected.statuses, "\(name) over TCP")
            #expect(probeAnswered == expected.probeAnswered, "\(name) over TCP: the OPTIONS behind it")
            #expect(closed == expected.closes, "\(name) over TCP: the connection")
            // Whatever happened to that connection, a new one is served.
            let next = try TCPPeer(connectingTo: server)
            try next.write(options(callID: "after-\(index)", via: "192.0.2.1:5060", transport: "TCP"))
            #expect(try next.nextMessage()?.statusCode == 200, "\(name): a new connection after it")
        }
    }
}
