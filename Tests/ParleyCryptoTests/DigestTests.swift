import Testing
import Foundation
import ParleyCrypto

private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

@Suite struct DigestTests {
    // FIPS 180-2 Appendix A.1 / B.1: "abc".
    @Test func sha1AndSha256OfAbc() throws {
        #expect(hex(try Digest.hash(.sha1, Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(try Digest.hash(.sha256, Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    // RFC 1321 appendix A.5 (the test suite): "" and "abc".
    @Test func md5TestSuite() throws {
        #expect(hex(try Digest.hash(.md5, [UInt8]())) == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(hex(try Digest.hash(.md5, Array("abc".utf8))) == "900150983cd24fb0d6963f7d28e17f72")
        #expect(DigestAlgorithm.md5.byteCount == 16)
    }

    // FIPS 180-4's SHA-512/256 example (NIST's published "abc" vector).
    @Test func sha512_256OfAbc() throws {
        let digest = try Digest.hash(.sha512_256, Array("abc".utf8))
        #expect(hex(digest) == "53048e2681941ef99b2e29b76b4c7dabe4c2d0c634fc6d46e0e2f13107e7af23")
        #expect(digest.count == DigestAlgorithm.sha512_256.byteCount)
    }

    // RFC 2202 § 2, test case 2 (HMAC-MD5).
    @Test func rfc2202HMACMD5Case2() throws {
        let mac = try Digest.hmac(.md5, key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8))
        #expect(hex(mac) == "750c783e6ab0b503eaa86e310a5db738")
    }

    // RFC 2202 § 3, test case 2.
    @Test func rfc2202HMACSHA1Case2() throws {
        let mac = try Digest.hmac(.sha1, key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8))
        #expect(hex(mac) == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
    }

    // RFC 4231 § 4.3, test case 2.
    @Test func rfc4231HMACSHA256Case2() throws {
        let mac = try Digest.hmac(.sha256, key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8))
        #expect(hex(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func hmacWithEmptyKeyAndMessage() throws {
        // HMAC-SHA256 with empty key and empty message, a well-known value.
        #expect(hex(try Digest.hmac(.sha256, key: [UInt8](), [UInt8]())) == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test func constantTimeEqual() {
        #expect(Digest.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!Digest.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!Digest.constantTimeEqual([1, 2], [1, 2, 3]))
    }

    @Test func randomBytesDiffer() throws {
        let a = try SecureRandom.bytes(16), b = try SecureRandom.bytes(16)
        #expect(a.count == 16 && a != b)
        #expect(try SecureRandom.bytes(0).isEmpty)
    }
}
