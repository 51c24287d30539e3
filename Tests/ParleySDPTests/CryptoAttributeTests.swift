import Foundation
import ParleySDP
import ParleyTestSupport
import Testing

/// `a=crypto` (RFC 4568 §9.1, SRTP's key parameters §9.2): reading, writing, and refusing.
@Suite("a=crypto (SDES, RFC 4568)")
struct CryptoAttributeTests {
    /// RFC 4568 §8.1, the example offer's two lines and the answer's line (each one line of
    /// SDP; the RFC folds them for print).
    static let rfcOfferLine1 = "1 AES_CM_128_HMAC_SHA1_80 inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz|2^20|1:4 FEC_ORDER=FEC_SRTP"
    static let rfcOfferLine2 = "2 F8_128_HMAC_SHA1_80 inline:MTIzNDU2Nzg5QUJDREUwMTIzNDU2Nzg5QUJjZGVm|2^20|1:4;inline:QUJjZGVmMTIzNDU2Nzg5QUJDREUwMTIzNDU2Nzg5|2^20|2:4 FEC_ORDER=FEC_SRTP"
    static let rfcAnswerLine = "1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|2^20|1:4"

    static func key(_ count: Int, _ seed: UInt8) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7) ^ seed } }

    @Test("RFC 4568 §8.1 example lines read and write back byte for byte")
    func rfcExamples() throws {
        for line in [Self.rfcOfferLine1, Self.rfcOfferLine2, Self.rfcAnswerLine] {
            let crypto = try CryptoAttribute(attributeValue: line)
            #expect(crypto.attributeValue == line)
            #expect(try CryptoAttribute(attributeValue: crypto.attributeValue) == crypto)
        }
        let first = try CryptoAttribute(attributeValue: Self.rfcOfferLine1)
        #expect(first.tag == 1)
        #expect(first.suite == .aesCM128HMACSHA1_80)
        #expect(first.keys.count == 1)
        #expect(first.keys[0].keySalt.count == 30)
        #expect(Array(first.keys[0].keySalt.prefix(4)) == Array("YS__".utf8))  // what the base64 spells
        #expect(first.keys[0].lifetime == .powerOfTwo(20))
        #expect(first.keys[0].mki == .init(value: 1, length: 4))
        #expect(first.sessionParameters == ["FEC_ORDER=FEC_SRTP"])
        #expect(first.unsupportedSessionParameters.isEmpty)

        // An unknown suite is kept as written, with both of its keys and their MKIs.
        let f8 = try CryptoAttribute(attributeValue: Self.rfcOfferLine2)
        #expect(f8.suite.name == "F8_128_HMAC_SHA1_80" && !f8.suite.isKnown)
        #expect(f8.keys.map(\.mki) == [.init(value: 1, length: 4), .init(value: 2, length: 4)])
        #expect(f8.keys.map(\.keySalt.count) == [30, 30])
    }

    @Test("one line per suite we know, with lifetimes as written and session parameters in order")
    func writesAndReads() throws {
        let lines: [CryptoAttribute] = [
            CryptoAttribute(tag: 1, suite: .aesCM128HMACSHA1_80, keys: [.init(keySalt: Self.key(30, 1))]),
            CryptoAttribute(tag: 2, suite: .aesCM128HMACSHA1_32, keys: [.init(keySalt: Self.key(30, 2), lifetime: .packets(1_048_576))]),
            CryptoAttribute(tag: 999_999_999, suite: .aeadAES128GCM, keys: [.init(keySalt: Self.key(28, 3), lifetime: .powerOfTwo(31), mki: .init(value: 255, length: 1))],
                            sessionParameters: ["KDR=0", "WSH=128", "UNENCRYPTED_SRTCP"]),
        ]
        for line in lines {
            let text = SDPAttribute(line).description
            #expect(text.hasPrefix("a=crypto:\(line.tag) \(line.suite.name) inline:"))
            #expect(try SDPAttribute(name: "crypto", value: line.attributeValue).parsed(as: CryptoAttribute.self) == line)
        }
        // A 28-byte GCM key||salt needs padding; it is written with it.
        #expect(lines[2].attributeValue.contains("==|2^31|255:1 KDR=0 WSH=128 UNENCRYPTED_SRTCP"))
        #expect(lines[2].unsupportedSessionParameters == ["UNENCRYPTED_SRTCP"])
        #expect(lines[1].attributeValue.hasSuffix("|1048576"))
    }

    @Test("base64 without its padding, tabs and runs of spaces are read")
    func looseInput() throws {
        let key = Self.key(28, 9)
        let padded = CryptoAttribute(tag: 4, suite: .aeadAES128GCM, keys: [.init(keySalt: key)]).attributeValue
        #expect(padded.hasSuffix("=="))
        let unpadded = String(padded.dropLast(2))
        let crypto = try CryptoAttribute(attributeValue: unpadded.replacingOccurrences(of: " ", with: " \t "))
        #expect(crypto.keys[0].keySalt == key)
        #expect(crypto.attributeValue == padded)
    }

    @Test("an MKI alone, or a lifetime alone, after the key")
    func optionalParts() throws {
        let key = CryptoAttribute.KeyParameter(keySalt: Self.key(30, 4)).text
        let mkiOnly = try CryptoAttribute(attributeValue: "1 AES_CM_128_HMAC_SHA1_32 \(key)|7:2")
        #expect(mkiOnly.keys[0].lifetime == nil && mkiOnly.keys[0].mki == .init(value: 7, length: 2))
        let lifetimeOnly = try CryptoAttribute(attributeValue: "1 AES_CM_128_HMAC_SHA1_32 \(key)|2^48")
        #expect(lifetimeOnly.keys[0].lifetime == .powerOfTwo(48) && lifetimeOnly.keys[0].mki == nil)
    }

    /// Each refused with a reason; none traps.
    @Test("malformed lines are refused with a clear reason", arguments: [
        ("", "expected <tag>"),
        ("1 AES_CM_128_HMAC_SHA1_80", "expected <tag>"),
        ("x AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR", "tag"),
        ("1234567890 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR", "tag"),
        ("1 AES-CM inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR", "crypto-suite"),
        ("1 AES_CM_128_HMAC_SHA1_80 PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR", "key method>:<key info"),
        ("1 AES_CM_128_HMAC_SHA1_80 uri:https://example.com/key", "not inline"),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:", "key||salt"),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:PS1u!!!!", "not base64"),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVB", "not base64"),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0m", "30-byte key||salt"),
        ("1 AEAD_AES_128_GCM inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR", "28-byte key||salt"),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|2^99", "lifetime"),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|2^x", "lifetime"),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|99999999999999999999999", "lifetime"),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|1:0", "MKI"),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|1:129", "MKI"),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|256:1", "does not fit"),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|1:4|2^20", "neither a lifetime"),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|2^20|2^20", "neither a lifetime"),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR||1:4", "key info"),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR;", "key method>:<key info"),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR KDR=25", "key derivation rate"),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR WSH=32", "window size hint"),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR FEC_ORDER=LATER", "FEC_ORDER"),
        ("1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR KDR=é", "visible characters"),
    ])
    func malformed(line: String, reason: String) {
        #expect {
            _ = try CryptoAttribute(attributeValue: line)
        } throws: { error in
            guard let error = error as? SDPError, error.kind == .malformedAttribute else { return false }
            return error.reason.hasPrefix("malformed a=crypto: ") && error.reason.contains(reason)
        }
    }

    @Test("more key parameters than a line may carry are refused")
    func tooManyKeys() {
        let key = "inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR"
        let line = "1 AES_CM_128_HMAC_SHA1_80 " + Array(repeating: key, count: CryptoAttribute.maximumKeyParameters + 1).joined(separator: ";")
        #expect(throws: SDPError.self) { _ = try CryptoAttribute(attributeValue: line) }
        let atLimit = "1 AES_CM_128_HMAC_SHA1_80 " + Array(repeating: key, count: CryptoAttribute.maximumKeyParameters).joined(separator: ";")
        #expect((try? CryptoAttribute(attributeValue: atLimit))?.keys.count == CryptoAttribute.maximumKeyParameters)
    }

    @Test("every truncation and 2,000 seeded mutations of an RFC line are read or refused, never trap")
    func hostileInput() throws {
        let line = Self.rfcOfferLine1
        for end in line.indices { _ = try? CryptoAttribute(attributeValue: String(line[..<end])) }
        var generator = SeededGenerator(seed: 4568)
        let bytes = Array(line.utf8)
        for _ in 0..<2_000 {
            var mutated = bytes
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                mutated[Int.random(in: 0..<mutated.count, using: &generator)] = UInt8.random(in: 0x20...0x7E, using: &generator)
            }
            if let crypto = try? CryptoAttribute(attributeValue: String(decoding: mutated, as: UTF8.self)) {
                #expect(try CryptoAttribute(attributeValue: crypto.attributeValue) == crypto)
            }
        }
    }

    @Test("the JSON form names the suite and key lengths, never the key")
    func json() throws {
        let crypto = try CryptoAttribute(attributeValue: Self.rfcAnswerLine)
        let json = String(decoding: try JSONEncoder().encode(SDPAttribute(crypto)), as: UTF8.self)
        #expect(json.contains("\"suite\":\"AES_CM_128_HMAC_SHA1_80\""))
        #expect(json.contains("\"keySaltLength\":30"))
        #expect(json.contains("\"lifetime\":\"2^20\""))
        // The raw value is the attribute's own; the parsed form adds no key bytes. (Read
        // as an object: JSONEncoder does not promise the members' order.)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let parsed = try #require(object["parsed"])
        let parsedText = String(decoding: try JSONSerialization.data(withJSONObject: parsed), as: UTF8.self)
        #expect(parsedText.contains("AES_CM_128_HMAC_SHA1_80") && !parsedText.contains("PS1u"))
    }
}
