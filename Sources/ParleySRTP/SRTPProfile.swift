/// An SRTP protection profile: which cipher and authentication the session uses, and so how
/// long the master key, master salt and authentication tag are.
///
/// The two profiles WebRTC peers negotiate through DTLS-SRTP (RFC 5764 §4.1.2, RFC 7714 §14.2),
/// and the 32-bit-tag AES-CM profile many SIP phones choose through SDES (RFC 4568 §6.2.2).
/// Every profile derives its session keys from the master key and salt with the AES-CM PRF
/// of RFC 3711 §4.3 (RFC 7714 §11 for the 96-bit GCM salt).
public enum SRTPProfile: String, Sendable, Hashable, CaseIterable, Codable {
    /// SRTP_AES128_CM_HMAC_SHA1_80 (RFC 3711, RFC 5764 §4.1.2): AES-128 in counter mode,
    /// HMAC-SHA1 truncated to 80 bits for both SRTP and SRTCP.
    case aes128CmHmacSha1_80
    /// SRTP_AES128_CM_HMAC_SHA1_32 (RFC 3711, RFC 4568 §6.2.2, RFC 5764 §4.1.2): AES-128 in
    /// counter mode, HMAC-SHA1 truncated to 32 bits on SRTP but 80 bits on SRTCP.
    case aes128CmHmacSha1_32
    /// SRTP_AEAD_AES_128_GCM (RFC 7714): AES-128-GCM with a 128-bit tag.
    case aeadAes128Gcm

    /// Master key length in bytes.
    public var masterKeyLength: Int { 16 }

    /// Master salt length in bytes: 112 bits for AES-CM (RFC 3711 §8.2), 96 bits for GCM (RFC 7714 §12).
    public var masterSaltLength: Int {
        switch self {
        case .aes128CmHmacSha1_80, .aes128CmHmacSha1_32: 14
        case .aeadAes128Gcm: 12
        }
    }

    /// Length of the key material a session takes: master key followed by master salt.
    public var keyMaterialLength: Int { masterKeyLength + masterSaltLength }

    /// Authentication tag length appended to each SRTP packet.
    public var rtpTagLength: Int {
        switch self {
        case .aes128CmHmacSha1_80: 10
        case .aes128CmHmacSha1_32: 4
        case .aeadAes128Gcm: 16
        }
    }

    /// Authentication tag length of each SRTCP packet: 80 bits for both AES-CM profiles
    /// (RFC 5764 §4.1.2, RFC 4568 §6.2.2: the short tag is SRTP's only), GCM's 128 otherwise.
    public var rtcpTagLength: Int {
        switch self {
        case .aes128CmHmacSha1_80, .aes128CmHmacSha1_32: 10
        case .aeadAes128Gcm: 16
        }
    }

    /// Bytes `protect` adds to an RTP packet: the tag (no MKI is used).
    public var rtpTrailerLength: Int { rtpTagLength }

    /// Bytes `protectRTCP` adds to an RTCP packet: the E flag and 31-bit SRTCP index
    /// (RFC 3711 §3.4), then the tag.
    public var rtcpTrailerLength: Int { 4 + rtcpTagLength }

    /// The DTLS-SRTP protection profile identifier (RFC 5764 §4.1.2, RFC 7714 §14.2).
    public var dtlsProfileID: UInt16 {
        switch self {
        case .aes128CmHmacSha1_80: 0x0001
        case .aes128CmHmacSha1_32: 0x0002
        case .aeadAes128Gcm: 0x0007
        }
    }

    /// The profile's registered name, as OpenSSL's `use_srtp` list spells it.
    public var registeredName: String {
        switch self {
        case .aes128CmHmacSha1_80: "SRTP_AES128_CM_SHA1_80"
        case .aes128CmHmacSha1_32: "SRTP_AES128_CM_SHA1_32"
        case .aeadAes128Gcm: "SRTP_AEAD_AES_128_GCM"
        }
    }

    /// The profile with this DTLS-SRTP identifier, if it is one we support.
    public init?(dtlsProfileID: UInt16) {
        guard let profile = Self.allCases.first(where: { $0.dtlsProfileID == dtlsProfileID }) else { return nil }
        self = profile
    }
}
