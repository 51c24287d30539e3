import Testing
import ParleySTUN

/// MESSAGE-INTEGRITY, MESSAGE-INTEGRITY-SHA256 and FINGERPRINT beyond the RFC 5769 vectors.
@Suite("STUN integrity and fingerprint")
struct STUNIntegrityTests {
    let key = STUNIntegrityKey.shortTerm(password: "ice-password-22-chars!")
    let id = STUNTransactionID(bytes: RFC5769.transactionID)!

    func bindingRequest() throws -> STUNMessage {
        var message = STUNMessage(class: .request, method: .binding, transactionID: id)
        try message.append(.username("remote:local"))
        try message.append(.priority(0x6E7F_1EFF))
        try message.append(.iceControlling(tieBreaker: 0x0123_4567_89AB_CDEF))
        try message.append(.useCandidate)
        return message
    }

    @Test("CRC-32 check value (ITU-T V.42): crc32(\"123456789\") == 0xCBF43926")
    func crcCheckValue() {
        #expect(STUNCRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(STUNCRC32.checksum([UInt8]()) == 0)
        // Every length mod 4, against the bitwise definition.
        for length in 0..<12 {
            let bytes = (0..<length).map { UInt8($0 * 37 & 0xFF) }
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            }
            #expect(STUNCRC32.checksum(bytes) == crc ^ 0xFFFF_FFFF)
        }
    }

    @Test("RFC 8489 §14.6: MESSAGE-INTEGRITY-SHA256, full and truncated, alone or after MESSAGE-INTEGRITY",
          arguments: [16, 20, 24, 28, 32])
    func sha256(length: Int) throws {
        let alone = try STUNMessage(decoding: try bindingRequest().encoded(addingIntegrity: [.sha256(key: key, length: length)], fingerprint: true))
        #expect(alone.attributes.last(where: { $0.type == .messageIntegritySHA256 })?.value.count == length)
        #expect(alone.verification(key: key) == STUNVerification(messageIntegrity: .absent, messageIntegritySHA256: .valid, fingerprint: .valid))
        #expect(alone.verifyMessageIntegritySHA256(key: .shortTerm(password: "other")) == .invalid)

        let both = try STUNMessage(decoding: try bindingRequest().encoded(addingIntegrity: [.sha1(key: key), .sha256(key: key, length: length)], fingerprint: true))
        #expect(both.attributes.map(\.type).suffix(3) == [.messageIntegrity, .messageIntegritySHA256, .fingerprint])
        #expect(both.verification(key: key) == STUNVerification(messageIntegrity: .valid, messageIntegritySHA256: .valid, fingerprint: .valid))
    }

    @Test("addingTrailers gives the message that encodes to the signed bytes")
    func addingTrailersMatchesEncoded() throws {
        let message = try bindingRequest()
        let signed = try message.addingTrailers(integrity: [.sha1(key: key)], fingerprint: true)
        #expect(try signed.encoded() == (try message.encoded(addingIntegrity: [.sha1(key: key)], fingerprint: true)))
        #expect(try STUNMessage(decoding: try signed.encoded()) == signed)
        #expect(signed.removingTrailers() == message)
    }

    @Test("HMAC over tampered data: any changed attribute byte makes MESSAGE-INTEGRITY invalid")
    func tamperedAttributes() throws {
        let bytes = try bindingRequest().encoded(addingIntegrity: [.sha1(key: key)])
        for index in 20..<(bytes.count - 24) {
            var tampered = bytes
            tampered[index] ^= 0x01
            guard let message = try? STUNMessage(decoding: tampered) else { continue }
            #expect(message.verifyMessageIntegrity(key: key) != .valid, "byte \(index)")
        }
        var badMAC = bytes
        badMAC[badMAC.count - 1] ^= 0x80
        #expect(try STUNMessage(decoding: badMAC).verifyMessageIntegrity(key: key) == .invalid)
    }

    @Test("RFC 8489 §14.5: attributes after MESSAGE-INTEGRITY are ignored and do not break it")
    func attributesAfterIntegrityAreIgnored() throws {
        var signed = try STUNMessage(decoding: try bindingRequest().removingUseCandidate().encoded(addingIntegrity: [.sha1(key: key)]))
        // An attacker appends USE-CANDIDATE and an unknown comprehension-required attribute.
        try signed.append(.useCandidate)
        signed.attributes.append(STUNAttribute(type: STUNAttributeType(0x7777), value: [1]))
        let decoded = try STUNMessage(decoding: try signed.encoded())
        #expect(decoded.verifyMessageIntegrity(key: key) == .valid)
        #expect(decoded.useCandidate == false)
        #expect(decoded.unknownComprehensionRequired.isEmpty)
        #expect(decoded.isIgnored(attributeAt: decoded.attributes.count - 1))
        #expect(decoded.processedAttributes.count == decoded.attributes.count - 2)
    }

    @Test("RFC 8489 §14.6: MESSAGE-INTEGRITY after MESSAGE-INTEGRITY-SHA256 is ignored")
    func integrityAfterSHA256IsIgnored() throws {
        var message = try bindingRequest().addingTrailers(integrity: [.sha256(key: key)])
        message.attributes.append(STUNAttribute(type: .messageIntegrity, value: [UInt8](repeating: 0, count: 20)))
        let decoded = try STUNMessage(decoding: try message.encoded())
        #expect(decoded.verifyMessageIntegrity(key: key) == .absent)
        #expect(decoded.verifyMessageIntegritySHA256(key: key) == .valid)
    }

    @Test("RFC 8489 §14.7: FINGERPRINT must be last")
    func fingerprintMustBeLast() throws {
        var message = try bindingRequest().addingTrailers(fingerprint: true)
        #expect(message.verifyFingerprint() == .valid)
        message.attributes.append(STUNAttribute(type: .software, value: Array("x".utf8)))
        #expect(message.verifyFingerprint() == .misplaced)
        let decoded = try STUNMessage(decoding: try message.encoded())
        #expect(decoded.verifyFingerprint() == .misplaced)
        #expect(decoded.software == nil)
    }

    @Test("FINGERPRINT over tampered bytes is invalid; a FINGERPRINT of the wrong size is invalid")
    func fingerprintTampered() throws {
        var bytes = try bindingRequest().encoded(fingerprint: true)
        bytes[9] ^= 0xFF
        #expect(try STUNMessage(decoding: bytes).verifyFingerprint() == .invalid)
        var message = try bindingRequest()
        message.attributes.append(STUNAttribute(type: .fingerprint, value: [1, 2]))
        #expect(message.verifyFingerprint() == .invalid)
    }

    @Test("Trailers cannot be added after FINGERPRINT or twice")
    func misplacedTrailers() throws {
        let fingerprinted = try bindingRequest().addingTrailers(fingerprint: true)
        #expect { try fingerprinted.encoded(addingIntegrity: [.sha1(key: key)]) } throws: { error in
            (error as? STUNError)?.kind == .misplacedTrailer && (error as? STUNError)?.attributeType == .messageIntegrity
        }
        #expect { try fingerprinted.encoded(fingerprint: true) } throws: { ($0 as? STUNError)?.kind == .misplacedTrailer }
        let signed = try bindingRequest().addingTrailers(integrity: [.sha1(key: key)])
        #expect { try signed.encoded(addingIntegrity: [.sha1(key: key)]) } throws: { ($0 as? STUNError)?.kind == .misplacedTrailer }
        #expect(throws: Never.self) { try signed.encoded(addingIntegrity: [.sha256(key: key)], fingerprint: true) }
        #expect { try bindingRequest().encoded(addingIntegrity: [.sha256(key: key), .sha1(key: key)]) } throws: { ($0 as? STUNError)?.kind == .misplacedTrailer }
        #expect { try bindingRequest().encoded(addingIntegrity: [.sha256(key: key, length: 18)]) } throws: { ($0 as? STUNError)?.kind == .invalidValue }
        #expect { try bindingRequest().encoded(addingIntegrity: [.sha256(key: key, length: 36)]) } throws: { ($0 as? STUNError)?.kind == .invalidValue }
    }

    @Test("An empty key is still a key, and verifies only with itself")
    func emptyKey() throws {
        let empty = STUNIntegrityKey(bytes: [])
        let message = try STUNMessage(decoding: try bindingRequest().encoded(addingIntegrity: [.sha1(key: empty)]))
        #expect(message.verifyMessageIntegrity(key: empty) == .valid)
        #expect(message.verifyMessageIntegrity(key: key) == .invalid)
    }

    @Test("A key does not print its bytes")
    func keyDescription() {
        #expect(key.description == "STUNIntegrityKey(22 bytes)")
    }
}

extension STUNMessage {
    fileprivate func removingUseCandidate() -> STUNMessage {
        var message = self
        message.attributes.removeAll { $0.type == .useCandidate }
        return message
    }
}
