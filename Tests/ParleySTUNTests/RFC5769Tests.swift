import Foundation
import Testing
import ParleySTUN

/// RFC 5769 "Test Vectors for STUN", section by section: parse, check every attribute, check
/// MESSAGE-INTEGRITY and FINGERPRINT, re-encode byte for byte, and build again from typed values.
@Suite("RFC 5769 test vectors")
struct RFC5769Tests {
    let key = STUNIntegrityKey.shortTerm(password: RFC5769.password)

    @Test("RFC 5769 §2.1 sample request parses with the attributes the RFC lists")
    func sampleRequestParses() throws {
        let message = try STUNMessage(decoding: RFC5769.sampleRequest)
        #expect(message.messageClass == .request)
        #expect(message.method == .binding)
        #expect(message.messageType == 0x0001)
        #expect(message.transactionID.bytes == RFC5769.transactionID)
        #expect(message.attributes.map(\.type) == [.software, .priority, .iceControlled, .username, .messageIntegrity, .fingerprint])
        #expect(message.software == "STUN test client")
        #expect(message.priority == 0x6E00_01FF)
        #expect(message.iceControlled == 0x932F_F9B1_5126_3B36)
        #expect(message.iceControlling == nil)
        #expect(message.useCandidate == false)
        #expect(message.username == "evtj:h6vY")
        #expect(message.attributes[3].padding == [0x20, 0x20, 0x20])
        #expect(message.unknownComprehensionRequired.isEmpty)
    }

    @Test("RFC 5769 §2.1 sample request: MESSAGE-INTEGRITY and FINGERPRINT verify")
    func sampleRequestVerifies() throws {
        let message = try STUNMessage(decoding: RFC5769.sampleRequest)
        #expect(message.verifyMessageIntegrity(key: key) == .valid)
        #expect(message.verifyMessageIntegrity(key: .shortTerm(password: "VOkJxbRl1RmTxUk/WvJxBT")) == .invalid)
        #expect(message.verifyMessageIntegritySHA256(key: key) == .absent)
        #expect(message.verifyFingerprint() == .valid)
        #expect(message.verification(key: key) == STUNVerification(messageIntegrity: .valid, messageIntegritySHA256: .absent, fingerprint: .valid))
        #expect(message.verification(key: nil).messageIntegrity == .unchecked)
    }

    @Test("RFC 5769 §2.1 sample request re-encodes and re-signs byte for byte")
    func sampleRequestReencodes() throws {
        let message = try STUNMessage(decoding: RFC5769.sampleRequest)
        #expect(try message.encoded() == RFC5769.sampleRequest)
        let resigned = try message.removingTrailers().encoded(addingIntegrity: [.sha1(key: key)], fingerprint: true)
        #expect(resigned == RFC5769.sampleRequest)
    }

    @Test("RFC 5769 §2.1 sample request built from typed values, USERNAME padded with spaces as in the RFC")
    func sampleRequestBuilds() throws {
        let id = try #require(STUNTransactionID(bytes: RFC5769.transactionID))
        var message = STUNMessage(class: .request, method: .binding, transactionID: id)
        try message.append(.software("STUN test client"))
        try message.append(.priority(0x6E00_01FF))
        try message.append(.iceControlled(tieBreaker: 0x932F_F9B1_5126_3B36))
        try message.append(.username("evtj:h6vY"), paddingByte: 0x20)
        let bytes = try message.encoded(addingIntegrity: [.sha1(key: key)], fingerprint: true)
        #expect(bytes == RFC5769.sampleRequest)
        // With the zero padding RFC 8489 asks senders to use, only the padding, the HMAC
        // and the CRC differ, and it still verifies.
        message.attributes[3] = try STUNAttribute(.username("evtj:h6vY"), transactionID: id)
        let zeroPadded = try STUNMessage(decoding: try message.encoded(addingIntegrity: [.sha1(key: key)], fingerprint: true))
        #expect(zeroPadded.attributes[3].padding == [0, 0, 0])
        #expect(zeroPadded.verification(key: key) == STUNVerification(messageIntegrity: .valid, messageIntegritySHA256: .absent, fingerprint: .valid))
    }

    @Test("RFC 5769 §2.2 IPv4 response: XOR-MAPPED-ADDRESS 192.0.2.1:32853")
    func ipv4Response() throws {
        let message = try STUNMessage(decoding: RFC5769.ipv4Response)
        #expect(message.messageClass == .success)
        #expect(message.method == .binding)
        #expect(message.messageType == 0x0101)
        #expect(message.software == "test vector")
        #expect(message.attributes[0].padding == [0x20])
        let address = try #require(message.xorMappedAddress)
        #expect(address == STUNTransportAddress(ip: "192.0.2.1", port: 32853))
        #expect(address.description == "192.0.2.1:32853")
        #expect(message.verification(key: key) == STUNVerification(messageIntegrity: .valid, messageIntegritySHA256: .absent, fingerprint: .valid))
        #expect(try message.encoded() == RFC5769.ipv4Response)
    }

    @Test("RFC 5769 §2.2 IPv4 response built from typed values")
    func ipv4ResponseBuilds() throws {
        let id = try #require(STUNTransactionID(bytes: RFC5769.transactionID))
        var message = STUNMessage(class: .success, method: .binding, transactionID: id)
        try message.append(.software("test vector"), paddingByte: 0x20)
        try message.append(.xorMappedAddress(try #require(STUNTransportAddress(ip: "192.0.2.1", port: 32853))))
        #expect(try message.encoded(addingIntegrity: [.sha1(key: key)], fingerprint: true) == RFC5769.ipv4Response)
    }

    @Test("RFC 5769 §2.3 IPv6 response: XOR-MAPPED-ADDRESS [2001:db8:1234:5678:11:2233:4455:6677]:32853")
    func ipv6Response() throws {
        let message = try STUNMessage(decoding: RFC5769.ipv6Response)
        #expect(message.messageClass == .success)
        let address = try #require(message.xorMappedAddress)
        #expect(address == STUNTransportAddress(ip: "2001:db8:1234:5678:11:2233:4455:6677", port: 32853))
        #expect(address.description == "[2001:db8:1234:5678:11:2233:4455:6677]:32853")
        #expect(message.verification(key: key) == STUNVerification(messageIntegrity: .valid, messageIntegritySHA256: .absent, fingerprint: .valid))
        #expect(try message.encoded() == RFC5769.ipv6Response)

        let id = try #require(STUNTransactionID(bytes: RFC5769.transactionID))
        var built = STUNMessage(class: .success, method: .binding, transactionID: id)
        try built.append(.software("test vector"), paddingByte: 0x20)
        try built.append(.xorMappedAddress(address))
        #expect(try built.encoded(addingIntegrity: [.sha1(key: key)], fingerprint: true) == RFC5769.ipv6Response)
    }

    @Test("RFC 5769 §2.4 long-term request: every attribute decodes, re-encodes byte for byte")
    func longTermRequest() throws {
        let message = try STUNMessage(decoding: RFC5769.longTermRequest)
        #expect(message.messageClass == .request)
        #expect(message.method == .binding)
        #expect(message.transactionID.description == "78ad3433c6ad72c029da412e")
        #expect(message.attributes.map(\.type) == [.username, .nonce, .realm, .messageIntegrity])
        #expect(message.username == "\u{30DE}\u{30C8}\u{30EA}\u{30C3}\u{30AF}\u{30B9}")
        #expect(message.nonce == "f//499k954d6OL34oL9FSTvy64sA")
        #expect(message.realm == "example.org")
        for attribute in message.attributes {
            #expect(throws: Never.self) { try attribute.decoded(transactionID: message.transactionID) }
        }
        #expect(message.verifyFingerprint() == .absent)
        #expect(try message.encoded() == RFC5769.longTermRequest)
    }

    @Test("RFC 5769 §2.4 long-term request: MESSAGE-INTEGRITY with a long-term key computed elsewhere")
    func longTermRequestIntegrity() throws {
        let message = try STUNMessage(decoding: RFC5769.longTermRequest)
        let longTerm = STUNIntegrityKey(bytes: RFC5769.longTermKey)
        #expect(message.verifyMessageIntegrity(key: longTerm) == .valid)
        #expect(message.verifyMessageIntegrity(key: .shortTerm(password: "TheMatrIX")) == .invalid)
        #expect(try message.removingTrailers().encoded(addingIntegrity: [.sha1(key: longTerm)]) == RFC5769.longTermRequest)
    }

    @Test("Tests/Fixtures/stun hex files hold the same RFC 5769 bytes")
    func fixtureFilesMatch() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/stun")
        for (section, bytes) in RFC5769.all {
            let text = try String(contentsOf: directory.appendingPathComponent("rfc5769-\(section).hex"), encoding: .utf8)
            #expect(RFC5769.hex(text) == bytes, "rfc5769-\(section).hex")
        }
    }
}

/// The fuzz seeds in Fuzz/corpus/stun were generated outside this package (Python's hmac,
/// hashlib and zlib), so they check MESSAGE-INTEGRITY-SHA256, ERROR-CODE and MAPPED-ADDRESS
/// against an independent implementation.
@Suite("Independently generated samples")
struct IndependentSampleTests {
    static func seed(_ name: String) throws -> [UInt8] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus/stun/\(name)")
        return [UInt8](try Data(contentsOf: url))
    }

    let key = STUNIntegrityKey.shortTerm(password: "ice-password-22-chars!")

    @Test("RFC 5769 binary seeds equal the vectors")
    func binarySeeds() throws {
        for (section, bytes) in RFC5769.all { #expect(try Self.seed("rfc5769-\(section).bin") == bytes) }
    }

    @Test("ICE binding request with MESSAGE-INTEGRITY, 20-byte MESSAGE-INTEGRITY-SHA256 and FINGERPRINT")
    func iceBindingRequest() throws {
        let bytes = try Self.seed("ice-binding-request.bin")
        let message = try STUNMessage(decoding: bytes)
        #expect(message.username == "remote:local")
        #expect(message.priority == 0x6E7F_1EFF)
        #expect(message.iceControlling == 0x0123_4567_89AB_CDEF)
        #expect(message.useCandidate)
        #expect(message.verification(key: key) == STUNVerification(messageIntegrity: .valid, messageIntegritySHA256: .valid, fingerprint: .valid))
        let rebuilt = try message.removingTrailers().encoded(addingIntegrity: [.sha1(key: key), .sha256(key: key, length: 20)], fingerprint: true)
        #expect(rebuilt == bytes)
    }

    @Test("420 error response with UNKNOWN-ATTRIBUTES")
    func errorResponse() throws {
        let message = try STUNMessage(decoding: try Self.seed("error-420.bin"))
        #expect(message.messageClass == .error)
        #expect(message.errorCode == .unknownAttribute)
        #expect(message.unknownAttributes == [STUNAttributeType(0x0003), STUNAttributeType(0x0019)])
        #expect(message.verification(key: key) == STUNVerification(messageIntegrity: .valid, messageIntegritySHA256: .absent, fingerprint: .valid))
    }

    @Test("MAPPED-ADDRESS over IPv6 and an unknown comprehension-optional attribute")
    func mappedAddress() throws {
        let message = try STUNMessage(decoding: try Self.seed("mapped-address.bin"))
        #expect(message.mappedAddress?.description == "[2001:db8::1]:3478")
        #expect(message.attributes[1].type == STUNAttributeType(0xC057))
        #expect(message.unknownComprehensionRequired.isEmpty)
        #expect(message.verifyFingerprint() == .valid)
    }

    @Test("Binding indication with only FINGERPRINT")
    func indication() throws {
        let message = try STUNMessage(decoding: try Self.seed("binding-indication.bin"))
        #expect(message.messageClass == .indication)
        #expect(message.verification(key: nil) == STUNVerification(messageIntegrity: .absent, messageIntegritySHA256: .absent, fingerprint: .valid))
    }
}
