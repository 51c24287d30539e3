import Testing
import ParleySTUN

/// Each way a message can be malformed gives its own typed error, with the offset and a
/// one-line description.
@Suite("STUN decoding errors")
struct STUNDecodingErrorTests {
    /// A Binding request header announcing `length` bytes of attributes, followed by `body`.
    static func message(length: Int? = nil, _ body: [UInt8]) -> [UInt8] {
        let length = length ?? body.count
        return [0x00, 0x01, UInt8(length >> 8), UInt8(length & 0xFF), 0x21, 0x12, 0xA4, 0x42]
            + RFC5769.transactionID + body
    }

    static func decodeError(_ bytes: [UInt8]) -> STUNError? {
        do {
            _ = try STUNMessage(decoding: bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test("RFC 8489 §5: fewer than 20 bytes is a truncated header")
    func shortHeader() throws {
        let error = try #require(Self.decodeError(Array(RFC5769.sampleRequest.prefix(7))))
        #expect(error.kind == .truncatedMessage)
        #expect(error.offset == 0)
        #expect(error.description == "truncated message header at offset 0: need 20 bytes, 7 left")
    }

    @Test("RFC 8489 §5: the two top bits must be zero")
    func topBits() throws {
        var bytes = RFC5769.sampleRequest
        bytes[0] |= 0x80
        let error = try #require(Self.decodeError(bytes))
        #expect(error.kind == .notSTUN)
        #expect(error.description == "not a STUN message at offset 0: first byte 0x80 has its top two bits set")
    }

    @Test("RFC 3489 message without magic cookie is reported as such")
    func classicSTUN() throws {
        // A classic Binding request: 16-byte transaction ID, no cookie.
        let bytes: [UInt8] = [0x00, 0x01, 0x00, 0x00] + (1...16).map { UInt8($0) }
        let error = try #require(Self.decodeError(bytes))
        #expect(error.kind == .missingMagicCookie)
        #expect(error.offset == 4)
        #expect(error.description == "no magic cookie at offset 4: found 0x01020304, expected 0x2112a442 (RFC 3489 classic STUN is not supported)")
        #expect(STUNMessage.looksLikeSTUN(bytes) == false)
    }

    @Test("RFC 8489 §5: length must be a multiple of 4")
    func lengthNotMultipleOfFour() throws {
        let error = try #require(Self.decodeError(Self.message(length: 6, [0, 0x25, 0, 0, 0, 0])))
        #expect(error.kind == .badMessageLength)
        #expect(error.offset == 2)
    }

    @Test("Length field larger than the bytes that follow")
    func lengthTooLarge() throws {
        let error = try #require(Self.decodeError(Self.message(length: 8, [0x00, 0x25, 0x00, 0x00])))
        #expect(error.kind == .truncatedMessage)
        #expect(error.description == "truncated message body at offset 20: need 8 bytes, 4 left")
    }

    @Test("Length field smaller than the bytes that follow")
    func trailingBytes() throws {
        let error = try #require(Self.decodeError(RFC5769.sampleRequest + [0, 0, 0, 0]))
        #expect(error.kind == .trailingBytes)
        #expect(error.offset == 108)
    }

    @Test("Absurd attribute length 0xFFFF is caught before anything is allocated")
    func absurdAttributeLength() throws {
        let error = try #require(Self.decodeError(Self.message([0x80, 0x22, 0xFF, 0xFF, 0x41, 0x41, 0x41, 0x41])))
        #expect(error.kind == .truncatedAttribute)
        #expect(error.offset == 24)
        #expect(error.attributeType == .software)
        #expect(error.description == "truncated attribute SOFTWARE value at offset 24: need 65535 bytes, 4 left")
    }

    static let malformedCases: [(name: String, body: [UInt8], type: STUNAttributeType)] = [
        ("XOR-MAPPED-ADDRESS with family 3", [0x00, 0x20, 0x00, 0x08, 0x00, 0x03, 0xA1, 0x47, 0xE1, 0x12, 0xA6, 0x43], .xorMappedAddress),
        ("XOR-MAPPED-ADDRESS IPv4 with 20 bytes", [0x00, 0x20, 0x00, 0x14, 0x00, 0x01] + [UInt8](repeating: 0, count: 18), .xorMappedAddress),
        ("MAPPED-ADDRESS IPv6 with 8 bytes", [0x00, 0x01, 0x00, 0x08, 0x00, 0x02, 0x00, 0x01, 1, 2, 3, 4], .mappedAddress),
        ("MAPPED-ADDRESS of 2 bytes", [0x00, 0x01, 0x00, 0x02, 0x00, 0x01, 0x00, 0x00], .mappedAddress),
        ("USERNAME not UTF-8", [0x00, 0x06, 0x00, 0x02, 0xC3, 0x28, 0x00, 0x00], .username),
        ("SOFTWARE with a surrogate", [0x80, 0x22, 0x00, 0x03, 0xED, 0xA0, 0x80, 0x00], .software),
        ("MESSAGE-INTEGRITY of 16 bytes", [0x00, 0x08, 0x00, 0x10] + [UInt8](repeating: 0, count: 16), .messageIntegrity),
        ("MESSAGE-INTEGRITY-SHA256 of 12 bytes", [0x00, 0x1C, 0x00, 0x0C] + [UInt8](repeating: 0, count: 12), .messageIntegritySHA256),
        ("MESSAGE-INTEGRITY-SHA256 of 18 bytes", [0x00, 0x1C, 0x00, 0x12] + [UInt8](repeating: 0, count: 20), .messageIntegritySHA256),
        ("MESSAGE-INTEGRITY-SHA256 of 36 bytes", [0x00, 0x1C, 0x00, 0x24] + [UInt8](repeating: 0, count: 36), .messageIntegritySHA256),
        ("FINGERPRINT of 8 bytes", [0x80, 0x28, 0x00, 0x08] + [UInt8](repeating: 0, count: 8), .fingerprint),
        ("ERROR-CODE class 7", [0x00, 0x09, 0x00, 0x04, 0x00, 0x00, 0x07, 0x00], .errorCode),
        ("ERROR-CODE class 2", [0x00, 0x09, 0x00, 0x04, 0x00, 0x00, 0x02, 0x00], .errorCode),
        ("ERROR-CODE number 100", [0x00, 0x09, 0x00, 0x04, 0x00, 0x00, 0x04, 0x64], .errorCode),
        ("ERROR-CODE of 3 bytes", [0x00, 0x09, 0x00, 0x03, 0x00, 0x04, 0x14, 0x00], .errorCode),
        ("UNKNOWN-ATTRIBUTES of odd length", [0x00, 0x0A, 0x00, 0x03, 0x00, 0x03, 0x00, 0x00], .unknownAttributes),
        ("PRIORITY of 3 bytes", [0x00, 0x24, 0x00, 0x03, 0x6E, 0x00, 0x01, 0x00], .priority),
        ("USE-CANDIDATE with a value", [0x00, 0x25, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00], .useCandidate),
        ("ICE-CONTROLLING of 4 bytes", [0x80, 0x2A, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00], .iceControlling),
        ("ICE-CONTROLLED of 12 bytes", [0x80, 0x29, 0x00, 0x0C] + [UInt8](repeating: 0, count: 12), .iceControlled),
        ("USERNAME of 764 bytes", [0x00, 0x06, 0x02, 0xFC] + [UInt8](repeating: 0x61, count: 764), .username),
        ("REALM of 800 bytes", [0x00, 0x14, 0x03, 0x20] + [UInt8](repeating: 0x61, count: 800), .realm),
    ]

    @Test("Malformed known attributes are rejected with the attribute and its offset", arguments: 0..<malformedCases.count)
    func malformedAttribute(index: Int) throws {
        let testCase = Self.malformedCases[index]
        let error = try #require(Self.decodeError(Self.message(testCase.body)), "\(testCase.name)")
        #expect(error.kind == .malformedAttribute, "\(testCase.name): \(error)")
        #expect(error.attributeType == testCase.type, "\(testCase.name)")
        #expect(error.offset == 20, "\(testCase.name)")
        #expect(error.description.hasPrefix("malformed \(testCase.type.name ?? "") at offset 20: "), "\(error)")
    }

    @Test("A USERNAME of 763 bytes is accepted (RFC 8489 §14.3, RFC 5389 compatibility)")
    func longestUsernameAccepted() throws {
        let body: [UInt8] = [0x00, 0x06, 0x02, 0xFB] + [UInt8](repeating: 0x61, count: 763) + [0]
        let message = try STUNMessage(decoding: Self.message(body))
        #expect(message.username?.utf8.count == 763)
    }

    @Test("Malformed attributes where a receiver ignores them are kept, not rejected")
    func malformedButIgnored() throws {
        let key = STUNIntegrityKey.shortTerm(password: "pw")
        var message = STUNMessage(class: .request, method: .binding, transactionID: try #require(STUNTransactionID(bytes: RFC5769.transactionID)))
        try message.append(.priority(1))
        var bytes = try message.encoded(addingIntegrity: [.sha1(key: key)])
        // USE-CANDIDATE with a value after MESSAGE-INTEGRITY, length field updated.
        bytes += [0x00, 0x25, 0x00, 0x04, 0xDE, 0xAD, 0xBE, 0xEF]
        bytes[3] += 8
        let decoded = try STUNMessage(decoding: bytes)
        #expect(decoded.attributes.count == 3)
        #expect(decoded.isIgnored(attributeAt: 2))
        #expect(decoded.useCandidate == false)
        #expect(decoded.verifyMessageIntegrity(key: key) == .valid)
        #expect(try decoded.encoded() == bytes)
    }
}
