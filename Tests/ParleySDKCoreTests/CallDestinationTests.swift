@_spi(ParleyEngines) @testable import ParleySDKCore
import ParleySignaling
import Testing

/// What `callPhoneNumber` and `callSIP` accept, and the clear `invalid_argument` for what
/// they do not, before anything is placed.
@Suite struct CallDestinationTests {
    static func error(_ body: () throws(ParleyClientError) -> Void) -> ParleyClientError? {
        do { try body(); return nil } catch { return error }
    }

    @Test(arguments: ["+14155550101", "+46701234567", "+12", "+123456789012345"])
    func phoneNumbersInE164(number: String) throws {
        #expect(try CallDestination.phoneNumber(number) == .phone(number))
    }

    @Test(arguments: [
        ("14155550101", "must be an E.164 number: '+' then 2 to 15 digits, the first not 0"),
        ("+0701234567", "must be an E.164 number: '+' then 2 to 15 digits, the first not 0"),
        ("+1", "must be an E.164 number: '+' then 2 to 15 digits, the first not 0"),
        ("+", "must be an E.164 number: '+' then 2 to 15 digits, the first not 0"),
        ("", "must not be empty"),
        ("+1 415 555 0101", "character ' ' at byte 2 is not allowed (allowed: + 0-9)"),
        ("+1-415", "character '-' at byte 2 is not allowed (allowed: + 0-9)"),
        ("+1234567890123456", "17 bytes exceeds the limit of 16"),
        ("+46+70", "must be an E.164 number: '+' then 2 to 15 digits, the first not 0"),
        ("tel:+4670", "character 't' at byte 0 is not allowed (allowed: + 0-9)"),
    ])
    func badPhoneNumbers(number: String, reason: String) throws {
        let error = try #require(Self.error { () throws(ParleyClientError) in _ = try CallDestination.phoneNumber(number) })
        #expect(error.code == "invalid_argument")
        #expect(error.message == "phone number \"\(number)\" is not valid: \(reason)")
    }

    @Test(arguments: [
        ("alice@example.test", "alice@example.test"),
        ("sip:alice@example.test", "alice@example.test"),
        ("SIP:alice@example.test:5070", "alice@example.test:5070"),
        ("alice@192.0.2.4;transport=udp", "alice@192.0.2.4;transport=udp"),
        ("sip:+4670123@trunk.example.test;transport=TCP", "+4670123@trunk.example.test;transport=TCP"),
        ("alice@[2001:db8::10]:5061", "alice@[2001:db8::10]:5061"),
        ("alice@example.test;transport=tls", "alice@example.test;transport=tls"),
        ("sips:alice@example.test", "sips:alice@example.test"),
    ])
    func sipAddresses(given: String, remoteID: String) throws {
        #expect(try CallDestination.sipAddress(given) == .sip(remoteID))
    }

    @Test(arguments: [
        ("alice", "SIP address \"alice\" must be user@domain[:port][;transport=udp|tcp|tls], optionally after sip: or sips:"),
        ("sip:example.test", "SIP address \"sip:example.test\" must be user@domain[:port][;transport=udp|tcp|tls], optionally after sip: or sips:"),
        ("sip:sip:alice@example.test", "SIP address \"sip:sip:alice@example.test\" must be user@domain[:port][;transport=udp|tcp|tls], optionally after sip: or sips:"),
        ("tel:+46@x", "SIP address \"tel:+46@x\" must be user@domain[:port][;transport=udp|tcp|tls], optionally after sip: or sips:"),
        ("alice@", "SIP address \"alice@\" is not valid: must name a domain after '@'"),
        ("@example.test", "SIP address \"@example.test\" is not valid: must name a user before '@'"),
        ("alice@example.test;transport=sctp", "SIP address \"alice@example.test;transport=sctp\" is not valid: the only parameter allowed after the domain is ;transport=udp, ;transport=tcp or ;transport=tls"),
        ("sips:sip:alice@example.test", "SIP address \"sips:sip:alice@example.test\" must be user@domain[:port][;transport=udp|tcp|tls], optionally after sip: or sips:"),
        ("alice@example.test:99999", "SIP address \"alice@example.test:99999\" is not valid: the port must be a number from 1 to 65535"),
        ("alice@exa mple.test", "SIP address \"alice@exa mple.test\" is not valid: character ' ' at byte 9 is not allowed (allowed: printable ASCII except < > \")"),
        ("<sip:alice@example.test>", "SIP address \"<sip:alice@example.test>\" must be user@domain[:port][;transport=udp|tcp|tls], optionally after sip: or sips:"),
        ("alice@<example.test>", "SIP address \"alice@<example.test>\" is not valid: character '<' at byte 6 is not allowed (allowed: printable ASCII except < > \")"),
    ])
    func badSIPAddresses(given: String, message: String) throws {
        let error = try #require(Self.error { () throws(ParleyClientError) in _ = try CallDestination.sipAddress(given) })
        #expect(error.code == "invalid_argument")
        #expect(error.message == message)
    }

    @Test func headersTowardSIPMustBeNamedX() throws {
        try CallDestination.checkSIPHeaders([:])
        try CallDestination.checkSIPHeaders(["x-account": "77", "X-Order": "1", "x-a": ""])
        for name in ["topic", "x-", "X", "xa", "Contact", "x_a"] {
            let error = try #require(Self.error { () throws(ParleyClientError) in try CallDestination.checkSIPHeaders(["x-ok": "1", name: "v"]) }, "\(name)")
            #expect(error.code == "invalid_argument")
            #expect(error.message == "header \"\(name)\": calls to SIP addresses and phone numbers take only custom headers named x-... (they travel as SIP headers)")
        }
    }
}
