import Testing
import ParleySTUN
import ParleyTestSupport

/// Whatever the bytes, decoding ends in a message or a `STUNError`, never a trap or a hang;
/// and whatever parses re-encodes to the same bytes and survives every check.
@Suite("STUN hostile input")
struct STUNHostileInputTests {
    /// Decodes and, on success, exercises everything a caller might do with the result.
    @discardableResult
    static func probe(_ bytes: [UInt8]) -> Result<STUNMessage, STUNError> {
        do {
            let message = try STUNMessage(decoding: bytes)
            #expect(try message.encoded() == bytes)
            #expect(try STUNMessage(decoding: try message.encoded()) == message)
            let key = STUNIntegrityKey.shortTerm(password: RFC5769.password)
            _ = message.verification(key: key)
            _ = message.unknownComprehensionRequired
            for index in message.attributes.indices where !message.isIgnored(attributeAt: index) {
                #expect(throws: Never.self) { try message.attributes[index].decoded(transactionID: message.transactionID) }
            }
            _ = message.xorMappedAddress
            _ = message.errorCode
            return .success(message)
        } catch {
            return .failure(error)
        }
    }

    @Test("Every truncation of every RFC 5769 vector throws truncatedMessage", arguments: RFC5769.all.map(\.section))
    func everyTruncation(section: String) throws {
        let bytes = try #require(RFC5769.all.first { $0.section == section }?.bytes)
        for cut in 0..<bytes.count {
            guard case .failure(let error) = Self.probe(Array(bytes.prefix(cut))) else {
                Issue.record("§\(section) cut at \(cut) parsed")
                continue
            }
            #expect(error.kind == .truncatedMessage, "§\(section) cut at \(cut): \(error)")
        }
    }

    @Test("Truncations with the length field patched to match parse or throw", arguments: RFC5769.all.map(\.section))
    func truncationsWithPatchedLength(section: String) throws {
        let bytes = try #require(RFC5769.all.first { $0.section == section }?.bytes)
        for cut in stride(from: 20, through: bytes.count, by: 4) {
            var prefix = Array(bytes.prefix(cut))
            prefix[2] = UInt8((cut - 20) >> 8)
            prefix[3] = UInt8((cut - 20) & 0xFF)
            switch Self.probe(prefix) {
            case .success(let message):
                // Cut on an attribute boundary: a shorter valid message. A cut that drops the
                // FINGERPRINT leaves the integrity check intact.
                #expect(message.attributes.count <= 6)
            case .failure(let error):
                #expect([.truncatedAttribute, .malformedAttribute].contains(error.kind), "§\(section) cut at \(cut): \(error)")
            }
        }
    }

    @Test("10,000 random byte strings end in a message or a STUNError")
    func randomBytes() {
        var generator = SeededGenerator(seed: 0x5354_554E)
        for _ in 0..<10_000 {
            let count = Int.random(in: 0...80, using: &generator)
            Self.probe((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
    }

    @Test("5,000 random attribute soups behind a valid header end in a message or a STUNError")
    func randomAttributesBehindValidHeader() {
        var generator = SeededGenerator(seed: 8489)
        var parsed = 0
        for _ in 0..<5_000 {
            var body: [UInt8] = []
            for _ in 0..<Int.random(in: 0...6, using: &generator) {
                // Mostly known types with plausible lengths, sometimes anything.
                let known: [UInt16] = [0x0001, 0x0006, 0x0008, 0x0009, 0x000A, 0x0014, 0x0015, 0x001C, 0x0020, 0x0024, 0x0025, 0x8022, 0x8028, 0x8029, 0x802A]
                let type = Bool.random(using: &generator) ? known.randomElement(using: &generator)! : UInt16.random(in: 0...0xFFFF, using: &generator)
                let length = Int.random(in: 0...24, using: &generator)
                body += [UInt8(type >> 8), UInt8(type & 0xFF), 0, UInt8(length)]
                body += (0..<(length + 3) / 4 * 4).map { _ in UInt8.random(in: 0...255, using: &generator) }
                if Int.random(in: 0..<8, using: &generator) == 0 { body[1] = 0x01; body[5 % body.count] = 0x01 }
            }
            let message = STUNDecodingErrorTests.message(body)
            if case .success = Self.probe(message) { parsed += 1 }
        }
        // The soup is built to parse often enough to exercise the success path.
        #expect(parsed > 500)
    }

    @Test("Every single-bit flip of every RFC 5769 vector ends in a message or a STUNError")
    func bitFlips() {
        let key = STUNIntegrityKey.shortTerm(password: RFC5769.password)
        for (section, bytes) in RFC5769.all {
            for index in bytes.indices {
                for bit in 0..<8 {
                    var flipped = bytes
                    flipped[index] ^= 1 << bit
                    guard case .success(let message) = Self.probe(flipped) else { continue }
                    // No flip passes every check: FINGERPRINT covers all other bytes of
                    // 2.1-2.3, MESSAGE-INTEGRITY everything before it in 2.4.
                    let verification = message.verification(key: section == "2.4" ? STUNIntegrityKey(bytes: RFC5769.longTermKey) : key)
                    let passes = verification.messageIntegrity == .valid && (section == "2.4" || verification.fingerprint == .valid)
                    #expect(!passes, "§\(section) byte \(index) bit \(bit) passed every check")
                }
            }
        }
    }

    @Test("Many attributes: a message of 16,383 empty attributes parses in bounded time")
    func manyAttributes() throws {
        let body = [UInt8]((0..<16_383).flatMap { _ in [0x80, 0x00, 0x00, 0x00] as [UInt8] })
        let message = try STUNMessage(decoding: STUNDecodingErrorTests.message(body))
        #expect(message.attributes.count == 16_383)
        #expect(message.unknownComprehensionRequired.isEmpty)
    }

    @Test("looksLikeSTUN never traps on short or random input")
    func looksLikeSTUNOnGarbage() {
        var generator = SeededGenerator(seed: 7983)
        for count in 0..<40 {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(STUNMessage.looksLikeSTUN(bytes) == false || count >= 20)
        }
    }
}
