import ParleySRTP
import Testing

/// Known answers. libsrtp takes master keys only, while RFC 7714 §16/§17 and RFC 3711 B.2
/// give session-level vectors; vectors/srtp_reference.py checks itself against those RFC
/// vectors, then protects the packets below from master keys. libsrtp must match it byte for
/// byte (see vectors/README.md).
@Suite("SRTP known-answer vectors")
struct SRTPVectorTests {
    static let cmPacket = hex("800f1234 decafbad cafebabe") + [UInt8](repeating: 0xab, count: 16)
    /// RFC 7714 §16 plaintext RTP packet ("Gallia est omnis divisa in partes tres").
    static let rfc7714RTP = hex("""
        8040f17b 8041f8d3 5501a0b2 47616c6c 69612065 7374206f 6d6e6973 20646976
        69736120 696e2070 61727465 73207472 6573
        """)
    /// RFC 7714 §17 plaintext RTCP packet (a sender report from SSRC "Mars").
    static let rfc7714RTCP = hex("""
        81c8000d 4d617273 4e545031 4e545032 52545020 0000042a 0000e930 4c756e61
        deadbeef deadbeef deadbeef deadbeef deadbeef
        """)

    @Test("RFC 3711 B.3 master key, AES_CM_128_HMAC_SHA1_80 SRTP: matches the reference")
    func aesCMRTP() throws {
        let (sender, receiver) = try sessionPair(.aes128CmHmacSha1_80)
        let expected = hex("800f1234decafbadcafebabe 4e55dc4ce79978d88ca4d215949d2402b78d6acc 99ea179b8dbb")
        let protected = try sender.protect(rtp: Self.cmPacket)
        #expect(protected == expected)
        #expect(protected.count == Self.cmPacket.count + 10)
        #expect(try receiver.unprotect(srtp: expected) == Self.cmPacket)
    }

    @Test("RFC 3711 §3.3.1 rollover: sequence 0 after 65535 is protected with ROC 1")
    func aesCMRTPRollover() throws {
        let (sender, receiver) = try sessionPair(.aes128CmHmacSha1_80)
        var last = Self.cmPacket
        last[2] = 0xff; last[3] = 0xff
        var wrapped = Self.cmPacket
        wrapped[2] = 0; wrapped[3] = 0
        let first = try sender.protect(rtp: last)
        let second = try sender.protect(rtp: wrapped)
        #expect(second == hex("800f0000decafbadcafebabe 24ecf92d9c97bf2ac679b796fdfd365a267beecd c56456590e62"))
        #expect(sender.rolloverCounter(ssrc: 0xcafebabe) == 1)
        #expect(try receiver.unprotect(srtp: first) == last)
        #expect(try receiver.unprotect(srtp: second) == wrapped)
        #expect(receiver.rolloverCounter(ssrc: 0xcafebabe) == 1)
    }

    @Test("RFC 3711 §3.4 AES_CM_128_HMAC_SHA1_80 SRTCP, first index 1: matches the reference")
    func aesCMRTCP() throws {
        let (sender, receiver) = try sessionPair(.aes128CmHmacSha1_80)
        let expected = hex("""
            81c8000d4d617273 f2bb7b81f9b988034c297110352c53781268f3d76040350f49086b0a2297239a
            eebaf47f1a17638ae7a25bc8 80000001 432cfe93cba0c4783d44
            """)
        let protected = try sender.protectRTCP(rtcp: Self.rfc7714RTCP)
        #expect(protected == expected)
        #expect(try receiver.unprotectRTCP(srtcp: expected) == Self.rfc7714RTCP)
    }

    @Test("RFC 7714 §16.1 packet, AEAD_AES_128_GCM SRTP from a master key: matches the reference")
    func gcmRTP() throws {
        let (sender, receiver) = try sessionPair(.aeadAes128Gcm)
        let expected = hex("""
            8040f17b8041f8d35501a0b2 92cb0ecff0a0db188f7bff6b523933aacef8ae9585ed378a627836cb2d6a731d6c34
            90d925387db18c0661762d59e50ad553 d241535a
            """)
        // 38-byte payload: header 12 + payload 38 + tag 16.
        let protected = try sender.protect(rtp: Self.rfc7714RTP)
        #expect(protected.count == Self.rfc7714RTP.count + 16)
        #expect(protected == expected)
        #expect(try receiver.unprotect(srtp: expected) == Self.rfc7714RTP)
    }

    @Test("RFC 7714 §17.1 packet, AEAD_AES_128_GCM SRTCP from a master key, index 1: matches the reference")
    func gcmRTCP() throws {
        let (sender, receiver) = try sessionPair(.aeadAes128Gcm)
        let expected = hex("""
            81c8000d4d617273 6e525f96a03f0774056b3c595dc5fc69f9f17ef57a412beed41b52140f81a7b0
            4c2c30f3a32afc8021dfbd46 339c88a7f76cae84d03f3da7e4e1053a 80000001
            """)
        let protected = try sender.protectRTCP(rtcp: Self.rfc7714RTCP)
        #expect(protected == expected)
        #expect(try receiver.unprotectRTCP(srtcp: expected) == Self.rfc7714RTCP)
    }

    @Test("RFC 5764 §4.1.2 / RFC 4568 §6.2 / RFC 7714 §12, §14.2: profile parameters")
    func profileParameters() {
        #expect(SRTPProfile.aes128CmHmacSha1_80.keyMaterialLength == 30)
        #expect(SRTPProfile.aes128CmHmacSha1_80.rtpTagLength == 10)
        #expect(SRTPProfile.aes128CmHmacSha1_80.rtcpTagLength == 10)
        #expect(SRTPProfile.aes128CmHmacSha1_32.keyMaterialLength == 30)
        #expect(SRTPProfile.aes128CmHmacSha1_32.rtpTagLength == 4)
        #expect(SRTPProfile.aes128CmHmacSha1_32.rtcpTagLength == 10)
        #expect(SRTPProfile.aeadAes128Gcm.keyMaterialLength == 28)
        #expect(SRTPProfile.aeadAes128Gcm.rtpTagLength == 16)
        #expect(SRTPProfile(dtlsProfileID: 0x0001) == .aes128CmHmacSha1_80)
        #expect(SRTPProfile(dtlsProfileID: 0x0007) == .aeadAes128Gcm)
        #expect(SRTPProfile(dtlsProfileID: 0x0002) == .aes128CmHmacSha1_32)
        #expect(SRTPProfile(dtlsProfileID: 0x0003) == nil)
    }
}
