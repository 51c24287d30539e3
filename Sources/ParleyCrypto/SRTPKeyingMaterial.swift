/// An SRTP protection profile negotiated by the DTLS `use_srtp` extension (RFC 5764 §4.1.2,
/// RFC 7714 §14.2).
public enum SRTPProtectionProfile: String, Sendable, Hashable, CaseIterable, Encodable {
    /// SRTP_AES128_CM_HMAC_SHA1_80 (0x0001): AES-128 counter mode, 80-bit HMAC-SHA1 tag.
    case aes128CMHMACSHA1_80
    /// SRTP_AEAD_AES_128_GCM (0x0007): AES-128 GCM, 16-byte tag.
    case aeadAES128GCM

    /// The IANA profile number carried in `use_srtp`.
    public var profileID: UInt16 {
        switch self {
        case .aes128CMHMACSHA1_80: return 0x0001
        case .aeadAES128GCM: return 0x0007
        }
    }

    /// OpenSSL's name for the profile (`SSL_CTX_set_tlsext_use_srtp` list syntax).
    public var openSSLName: String {
        switch self {
        case .aes128CMHMACSHA1_80: return "SRTP_AES128_CM_SHA1_80"
        case .aeadAES128GCM: return "SRTP_AEAD_AES_128_GCM"
        }
    }

    /// Master key length in bytes.
    public var keyLength: Int { 16 }

    /// Master salt length in bytes: 112 bits for AES-CM (RFC 3711 §8.2), 96 bits for GCM
    /// (RFC 7714 §12).
    public var saltLength: Int {
        switch self {
        case .aes128CMHMACSHA1_80: return 14
        case .aeadAES128GCM: return 12
        }
    }

    init?(profileID: UInt) {
        guard let match = Self.allCases.first(where: { UInt($0.profileID) == profileID }) else { return nil }
        self = match
    }
}

/// SRTP master keys and salts exported from a finished DTLS handshake (RFC 5764 §4.2), as
/// plain bytes for the SRTP layer.
///
/// The exporter output (label `EXTRACTOR-dtls_srtp`, no context) is
/// `client_write_key | server_write_key | client_write_salt | server_write_salt`; the DTLS
/// client protects what it sends with the client key and salt.
public struct SRTPKeyingMaterial: Sendable, Hashable, CustomStringConvertible {
    /// The negotiated profile.
    public let profile: SRTPProtectionProfile
    /// Which DTLS role this side had; decides which half is "local".
    public let localRole: DTLSRole
    public let clientMasterKey: [UInt8]
    public let serverMasterKey: [UInt8]
    public let clientMasterSalt: [UInt8]
    public let serverMasterSalt: [UInt8]

    /// Splits the exporter output; nil when its length does not fit the profile.
    public init?(profile: SRTPProtectionProfile, localRole: DTLSRole, exported: [UInt8]) {
        let keyLength = profile.keyLength, saltLength = profile.saltLength
        guard exported.count == 2 * (keyLength + saltLength) else { return nil }
        self.profile = profile
        self.localRole = localRole
        clientMasterKey = Array(exported[0..<keyLength])
        serverMasterKey = Array(exported[keyLength..<(2 * keyLength)])
        clientMasterSalt = Array(exported[(2 * keyLength)..<(2 * keyLength + saltLength)])
        serverMasterSalt = Array(exported[(2 * keyLength + saltLength)...])
    }

    /// Total exporter length for `profile`: 60 bytes for AES-CM, 56 for GCM.
    public static func exportLength(for profile: SRTPProtectionProfile) -> Int {
        2 * (profile.keyLength + profile.saltLength)
    }

    /// Master key || master salt this side uses to protect what it sends.
    public var localKeyAndSalt: [UInt8] {
        localRole == .client ? clientMasterKey + clientMasterSalt : serverMasterKey + serverMasterSalt
    }

    /// Master key || master salt the peer uses; this side unprotects with it.
    public var remoteKeyAndSalt: [UInt8] {
        localRole == .client ? serverMasterKey + serverMasterSalt : clientMasterKey + clientMasterSalt
    }

    /// Names the profile and role only: keys stay out of logs.
    public var description: String { "SRTPKeyingMaterial(\(profile.rawValue), local \(localRole))" }
}

/// The DTLS role of this side. From SDP `a=setup` (RFC 5763 §5, RFC 4145): the side that is
/// `active` opens the connection and is the DTLS client; `passive` is the DTLS server.
public enum DTLSRole: String, Sendable, Hashable, Encodable {
    case client
    case server

    /// The role for this side's own final `a=setup` value: `active` -> client, `passive` ->
    /// server. `actpass` (an offer that leaves the choice to the answerer) and anything
    /// else give nil.
    public init?(localSetup value: String) {
        switch value.lowercased() {
        case "active": self = .client
        case "passive": self = .server
        default: return nil
        }
    }
}
