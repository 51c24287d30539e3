import ParleySignaling
import Testing

/// What `call.start` says about calls to SIP endpoints and phone numbers: SIP addresses
/// as URIs or as `user@domain[:port][;transport=udp|tcp|tls]`, the optional `cli`, and the
/// same address rules for addresses built in code (`SignalingMessage.Address.formatProblem`).
@Suite("SIP and phone destinations")
struct SIPDestinationTests {
    static func error(_ text: String) -> SignalingError? {
        signalingError { () throws(SignalingError) in try SignalingCodec.decode(text) }
    }

    static func sip(_ address: String) -> String { #"{"kind":"sip","address":"\#(address)"}"# }

    @Test("SIP addresses: a sip: or sips: URI, or user@domain with an optional port and transport")
    func sipAddresses() throws {
        let cases: [(String, String?)] = [
            ("alice@example.test", nil),
            ("alice@example.test:5070", nil),
            ("alice@example.test;transport=udp", nil),
            ("alice@192.0.2.4:5060;TRANSPORT=TCP", nil),
            ("alice@[2001:db8::10]:5061", nil),
            ("+4670123@trunk.example.test", nil),
            ("sip:alice@example.test;transport=tls", nil),
            ("alice", "must be a sip: or sips: URI, or user@domain[:port][;transport=udp|tcp|tls]"),
            ("tel:+4670", "must be a SIP URI starting with sip: or sips:"),
            ("mailto:alice@example.test", "must be a SIP URI starting with sip: or sips:"),
            ("@example.test", "must name a user before '@'"),
            ("alice@", "must name a domain after '@'"),
            ("alice@:5060", "must name a domain after '@'"),
            ("alice@bob@example.test", "must contain one '@' (user@domain)"),
            ("alice@exa_mple.test", "the domain may contain only A-Z a-z 0-9 - ."),
            ("alice@example.test:0", "the port must be a number from 1 to 65535"),
            ("alice@example.test:65536", "the port must be a number from 1 to 65535"),
            ("alice@example.test:50a0", "the port must be a number from 1 to 65535"),
            ("alice@example.test:", "the port must be a number from 1 to 65535"),
            ("alice@example.test;transport=sctp", "the only parameter allowed after the domain is ;transport=udp, ;transport=tcp or ;transport=tls"),
            ("alice@example.test;lr", "the only parameter allowed after the domain is ;transport=udp, ;transport=tcp or ;transport=tls"),
            ("alice@[2001:db8::10", "an IPv6 reference must end with ']'"),
            ("alice@[example]", "the domain's IPv6 reference is not an IPv6 address"),
            ("alice@[2001:db8::1]5060", "expected ':port' after the IPv6 reference"),
        ]
        for (address, reason) in cases {
            let error = Self.error(ValidationTests.callStart(to: Self.sip(address)))
            #expect(error?.reason == reason, "\(address)")
            if reason != nil { #expect(error?.field == "to.address" && error?.code == .badRequest, "\(address)") }
            // The same rule for an address built in code.
            #expect(SignalingMessage.Address.sip(address).formatProblem == reason, "\(address)")
        }
    }

    @Test("formatProblem is the reader's rule for every kind")
    func formatProblems() {
        #expect(SignalingMessage.Address.user("bob").formatProblem == nil)
        #expect(SignalingMessage.Address.user("bob smith").formatProblem == "character ' ' at byte 3 is not allowed (allowed: A-Z a-z 0-9 - _ =)")
        #expect(SignalingMessage.Address.phone("+46701234567").formatProblem == nil)
        #expect(SignalingMessage.Address.phone("0701234567").formatProblem == "must be an E.164 number: '+' then 2 to 15 digits, the first not 0")
        #expect(SignalingMessage.Address.phone("+1234567890123456").formatProblem == "17 bytes exceeds the limit of 16")
        #expect(SignalingMessage.Address.sip("sip:" + String(repeating: "a", count: 252)).formatProblem == "256 bytes exceeds the limit of 255")
        #expect(SignalingMessage.Address.conference("room.1").formatProblem == "character '.' at byte 4 is not allowed (allowed: A-Z a-z 0-9 - _ =)")
    }

    @Test("cli: optional, E.164, round-trips; absent when not given")
    func cli() throws {
        let frame = ValidationTests.callStart(to: #"{"kind":"phone","address":"+46701234567"}"#, extra: #","cli":"+46812345678""#)
        guard case .callStart(let start) = try SignalingCodec.decode(frame) else {
            Issue.record("not call.start")
            return
        }
        #expect(start.cli == "+46812345678")
        #expect(try SignalingCodec.decode(SignalingCodec.encode(.callStart(start))) == .callStart(start))
        #expect(SignalingCodec.encodeToString(.callStart(start)).hasSuffix(#","cli":"+46812345678"}"#))
        guard case .callStart(let plain) = try SignalingCodec.decode(ValidationTests.callStart()) else { return }
        #expect(plain.cli == nil)
        #expect(!SignalingCodec.encodeToString(.callStart(plain)).contains("cli"))

        let notE164 = try #require(Self.error(ValidationTests.callStart(extra: #","cli":"46812345678""#)))
        #expect(notE164.code == .badRequest && notE164.field == "cli")
        #expect(notE164.reason == "must be an E.164 number: '+' then 2 to 15 digits, the first not 0")
        let number = try #require(Self.error(ValidationTests.callStart(extra: #","cli":46812345678"#)))
        #expect(number.field == "cli" && number.reason == "expected a string, found number")
    }

    @Test("sip_error: the code of a call the SIP side failed")
    func sipErrorCode() throws {
        #expect(SignalingErrorCode.sipError.rawValue == "sip_error")
        let ended = #"{"v":1,"type":"call.ended","callId":"\#(Samples.callID)","cause":"error","error":{"code":"sip_error","message":"SIP 503 Service Unavailable"},"details":{"startedTime":1,"endedTime":2}}"#
        guard case .callEnded(let message) = try SignalingCodec.decode(ended, sender: .serverToDevice) else {
            Issue.record("not call.ended")
            return
        }
        #expect(message.error == .init(code: .sipError, message: "SIP 503 Service Unavailable"))
    }
}
