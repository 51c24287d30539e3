import Testing
import ParleySTUN
import ParleyTestSupport

/// Header fields, attribute values, unknown attributes and the encoder's limits.
@Suite("STUN messages and attributes")
struct STUNMessageTests {
    let id = STUNTransactionID(bytes: RFC5769.transactionID)!

    @Test("RFC 8489 §5: message type interleaves class and method bits")
    func messageTypeBits() throws {
        let cases: [(STUNMessageClass, UInt16, UInt16)] = [
            (.request, 0x001, 0x0001), (.indication, 0x001, 0x0011), (.success, 0x001, 0x0101), (.error, 0x001, 0x0111),
            (.request, 0x003, 0x0003), (.indication, 0x006, 0x0016), (.error, 0xFFF, 0x3FFF), (.request, 0x080, 0x0200),
        ]
        for (messageClass, methodNumber, type) in cases {
            let method = try #require(STUNMethod(rawValue: methodNumber))
            let message = STUNMessage(class: messageClass, method: method, transactionID: id)
            #expect(message.messageType == type)
            let bytes = try message.encoded()
            #expect(bytes.prefix(2) == [UInt8(type >> 8), UInt8(type & 0xFF)])
            let decoded = try STUNMessage(decoding: bytes)
            #expect(decoded.messageClass == messageClass && decoded.method == method)
        }
        #expect(STUNMethod(rawValue: 0x1000) == nil)
    }

    @Test("Every class with every method round-trips through the message type")
    func allMethodsAndClasses() throws {
        for methodNumber in UInt16(0)...0x0FFF {
            let method = try #require(STUNMethod(rawValue: methodNumber))
            for messageClass in STUNMessageClass.allCases {
                let message = STUNMessage(class: messageClass, method: method, transactionID: id)
                let decoded = try STUNMessage(decoding: try message.encoded())
                #expect(decoded == message)
            }
        }
    }

    @Test("RFC 7983 §7 demultiplexing: STUN first byte 0...3 with the magic cookie")
    func looksLikeSTUN() {
        for (_, bytes) in RFC5769.all { #expect(STUNMessage.looksLikeSTUN(bytes)) }
        #expect(STUNMessage.looksLikeSTUN(RFC5769.sampleRequest[...]))
        var rtp = RFC5769.sampleRequest
        rtp[0] = 0x80
        #expect(!STUNMessage.looksLikeSTUN(rtp))
        var dtls = RFC5769.sampleRequest
        dtls[0] = 0x16
        #expect(!STUNMessage.looksLikeSTUN(dtls))
        var noCookie = RFC5769.sampleRequest
        noCookie[5] = 0
        #expect(!STUNMessage.looksLikeSTUN(noCookie))
        #expect(!STUNMessage.looksLikeSTUN(RFC5769.sampleRequest.prefix(19)))
    }

    @Test("Every typed attribute survives encode and decode")
    func typedRoundTrip() throws {
        let values: [STUNAttributeValue] = [
            .mappedAddress(STUNTransportAddress(ip: .ipv4(0x7F00_0001), port: 3478)),
            .xorMappedAddress(try #require(STUNTransportAddress(ip: "2001:db8::1", port: 65535))),
            .xorMappedAddress(try #require(STUNTransportAddress(ip: "::ffff:192.0.2.9", port: 0))),
            .username("ufrag1:ufrag2"),
            .errorCode(.roleConflict),
            .errorCode(STUNErrorCode(code: 699, reason: "")),
            .unknownAttributes([STUNAttributeType(0x0003), STUNAttributeType(0x7FFF)]),
            .priority(0xFFFF_FFFF),
            .useCandidate,
            .iceControlling(tieBreaker: .max),
            .iceControlled(tieBreaker: 0),
            .software("Parley 0.1 — ünïcödé"),
            .realm("example.org"),
            .nonce("f//499k954d6OL34oL9FSTvy64sA"),
            .other(type: STUNAttributeType(0xC057), value: [0x00, 0x01, 0x00, 0x0A]),
            .other(type: STUNAttributeType(0x0019), value: [17, 0, 0, 0]),
        ]
        var message = STUNMessage(class: .error, method: .binding, transactionID: id)
        for value in values { try message.append(value) }
        let decoded = try STUNMessage(decoding: try message.encoded())
        #expect(decoded == message)
        for (attribute, value) in zip(decoded.attributes, values) {
            #expect(try attribute.decoded(transactionID: id) == value)
        }
        #expect(decoded.errorCode == .roleConflict)
        #expect(decoded.errorCode?.errorClass == 4 && decoded.errorCode?.number == 87)
        #expect(decoded.unknownAttributes == [STUNAttributeType(0x0003), STUNAttributeType(0x7FFF)])
        #expect(decoded.mappedAddress?.description == "127.0.0.1:3478")
        #expect(decoded.xorMappedAddress?.description == "[2001:db8::1]:65535")
        #expect(decoded.useCandidate)
        #expect(decoded.iceControlling == .max && decoded.iceControlled == 0)
    }

    @Test("RFC 8489 §14: unknown comprehension-required attributes are reported, optional ones are not, both are kept")
    func unknownAttributes() throws {
        var message = STUNMessage(class: .request, method: .binding, transactionID: id)
        message.attributes = [
            STUNAttribute(type: STUNAttributeType(0x0003), value: [0, 0, 0, 4]),
            STUNAttribute(type: STUNAttributeType(0xC001), value: [1, 2, 3]),
            STUNAttribute(type: STUNAttributeType(0x0019), value: [17, 0, 0, 0]),
            STUNAttribute(type: STUNAttributeType(0x0003), value: [0, 0, 0, 0]),
        ]
        let bytes = try message.encoded()
        let decoded = try STUNMessage(decoding: bytes)
        #expect(decoded.unknownComprehensionRequired == [STUNAttributeType(0x0003), STUNAttributeType(0x0019)])
        #expect(decoded.unknownComprehensionRequired(understanding: [STUNAttributeType(0x0019)]) == [STUNAttributeType(0x0003)])
        #expect(try decoded.encoded() == bytes)
        #expect(decoded.attributes[1].value == [1, 2, 3] && decoded.attributes[1].padding == [0])

        // The 420 answer an agent builds from it.
        var answer = STUNMessage(class: .error, method: .binding, transactionID: decoded.transactionID)
        try answer.append(.errorCode(.unknownAttribute))
        try answer.append(.unknownAttributes(decoded.unknownComprehensionRequired))
        let answered = try STUNMessage(decoding: try answer.encoded(fingerprint: true))
        #expect(answered.errorCode?.code == 420)
        #expect(answered.unknownAttributes == [STUNAttributeType(0x0003), STUNAttributeType(0x0019)])
    }

    @Test("Reserved bits are ignored on receipt and kept on re-encode")
    func reservedBits() throws {
        // XOR-MAPPED-ADDRESS with a non-zero reserved first byte; ERROR-CODE with reserved bits set.
        let body: [UInt8] = [0x00, 0x20, 0x00, 0x08, 0xFF, 0x01, 0xA1, 0x47, 0xE1, 0x12, 0xA6, 0x43,
                             0x00, 0x09, 0x00, 0x04, 0xFF, 0xFF, 0xFC, 0x14]
        let bytes = STUNDecodingErrorTests.message(body)
        let message = try STUNMessage(decoding: bytes)
        #expect(message.xorMappedAddress?.description == "192.0.2.1:32853")
        #expect(message.errorCode?.code == 420)
        #expect(try message.encoded() == bytes)
    }

    @Test("The encoder refuses out-of-range values")
    func encoderLimits() throws {
        var message = STUNMessage(class: .request, method: .binding, transactionID: id)
        func kind(_ value: STUNAttributeValue) -> STUNError.Kind? {
            do { try message.append(value); return nil } catch { return error.kind }
        }
        #expect(kind(.username(String(repeating: "a", count: 508))) == nil)
        #expect(kind(.username(String(repeating: "a", count: 509))) == .invalidValue)
        #expect(kind(.software(String(repeating: "é", count: 127))) == nil)
        #expect(kind(.software(String(repeating: "é", count: 128))) == .invalidValue)
        #expect(kind(.realm(String(repeating: "r", count: 128))) == .invalidValue)
        #expect(kind(.nonce(String(repeating: "n", count: 128))) == .invalidValue)
        #expect(kind(.errorCode(STUNErrorCode(code: 299, reason: "x"))) == .invalidValue)
        #expect(kind(.errorCode(STUNErrorCode(code: 700, reason: "x"))) == .invalidValue)
        #expect(kind(.messageIntegrity([UInt8](repeating: 0, count: 19))) == .invalidValue)
        #expect(kind(.messageIntegritySHA256([UInt8](repeating: 0, count: 20))) == nil)
        #expect(kind(.messageIntegritySHA256([UInt8](repeating: 0, count: 14))) == .invalidValue)
        #expect(kind(.other(type: STUNAttributeType(0x8888), value: [UInt8](repeating: 0, count: 65536))) == .invalidValue)

        var huge = STUNMessage(class: .request, method: .binding, transactionID: id)
        huge.attributes.append(STUNAttribute(type: STUNAttributeType(0x8888), value: [UInt8](repeating: 0, count: 65536)))
        #expect { try huge.encoded() } throws: { ($0 as? STUNError)?.kind == .invalidValue }
        huge.attributes = [STUNAttribute(type: STUNAttributeType(0x8888), value: [UInt8](repeating: 0, count: 40_000)),
                           STUNAttribute(type: STUNAttributeType(0x8889), value: [UInt8](repeating: 0, count: 40_000))]
        #expect { try huge.encoded() } throws: { ($0 as? STUNError)?.kind == .invalidValue }
        // Room for the attributes but not for the trailer.
        huge.attributes = [STUNAttribute(type: STUNAttributeType(0x8888), value: [UInt8](repeating: 0, count: 65_528))]
        #expect(throws: Never.self) { try huge.encoded() }
        #expect { try huge.encoded(fingerprint: true) } throws: { ($0 as? STUNError)?.kind == .invalidValue }
    }

    @Test("Transaction IDs: 12 bytes, random ones differ")
    func transactionIDs() throws {
        #expect(STUNTransactionID(bytes: [UInt8](repeating: 0, count: 11)) == nil)
        #expect(id.bytes == RFC5769.transactionID)
        #expect(id.description == "b7e7a701bc34d686fa87dfae")
        var system = SystemRandomNumberGenerator()
        let a = STUNTransactionID.random(using: &system)
        let b = STUNTransactionID.random(using: &system)
        #expect(a != b)
        // The caller's generator decides: the same seed, the same IDs.
        var first = SeededGenerator(seed: 5489)
        var second = SeededGenerator(seed: 5489)
        let seeded = (0..<4).map { _ in STUNTransactionID.random(using: &first) }
        #expect(seeded == (0..<4).map { _ in STUNTransactionID.random(using: &second) })
        #expect(Set(seeded).count == 4)
    }

    @Test("IP address text follows RFC 5952")
    func ipAddressText() {
        let cases: [(String, String?)] = [
            ("192.0.2.1", "192.0.2.1"),
            ("0.0.0.0", "0.0.0.0"),
            ("255.255.255.255", "255.255.255.255"),
            ("2001:DB8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
            ("2001:db8:0:0:0:0:2:1", "2001:db8::2:1"),
            ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),
            ("::", "::"),
            ("::1", "::1"),
            ("1::", "1::"),
            ("fe80::1:2:3:4", "fe80::1:2:3:4"),
            ("::ffff:192.0.2.9", "::ffff:192.0.2.9"),
            ("1:0:0:2:0:0:0:3", "1:0:0:2::3"),
            ("256.0.0.1", nil),
            ("1.2.3", nil),
            ("01.2.3.4", nil),
            ("1:2:3:4:5:6:7:8:9", nil),
            ("1::2::3", nil),
            ("fe80::1%eth0", nil),
            ("12345::", nil),
            ("", nil),
            (":", nil),
            (":::", nil),
        ]
        for (text, expected) in cases {
            #expect(STUNIPAddress(text)?.description == expected, "\(text)")
        }
        #expect(STUNIPAddress(bytes: [192, 0, 2, 1]) == .ipv4(0xC000_0201))
        #expect(STUNIPAddress(bytes: [1, 2, 3]) == nil)
        #expect(STUNIPAddress("2001:db8::1")?.bytes == [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [1])
    }
}

/// Inputs the fuzzer found, kept as regression tests.
@Suite("STUN fuzz regressions")
struct STUNFuzzRegressionTests {
    @Test("Method 0x101 in §2.1's bytes: parses (integrity now fails) but RFC 7983 demux does not claim it")
    func highMethodNotClaimedByDemux() throws {
        var bytes = RFC5769.sampleRequest
        bytes[0] = 0x04
        let message = try STUNMessage(decoding: bytes)
        #expect(message.method.rawValue == 0x101)
        #expect(message.messageClass == .request)
        #expect(!STUNMessage.looksLikeSTUN(bytes))
        #expect(message.verifyMessageIntegrity(key: .shortTerm(password: RFC5769.password)) == .invalid)
        #expect(try message.encoded() == bytes)
    }
}
