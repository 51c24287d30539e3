import ParleyWireCore
/// A SHA-256 certificate fingerprint as signaled in SDP (RFC 8122 §5, `a=fingerprint`).
///
/// The text form is `sha-256 AB:CD:…` (32 upper-case hex pairs joined by colons). Only
/// SHA-256 is produced and accepted: it is what WebRTC peers use, and RFC 8122 §5 forbids
/// MD2/MD5 while SHA-1 is being phased out.
public struct DTLSFingerprint: Sendable, Hashable, CustomStringConvertible, Encodable {
    /// The hash function name as written in SDP.
    public static let algorithm = "sha-256"

    /// The 32 digest bytes.
    public let bytes: [UInt8]

    /// Wraps 32 digest bytes; returns nil for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == DigestAlgorithm.sha256.byteCount else { return nil }
        self.bytes = bytes
    }

    /// The SHA-256 fingerprint of a DER-encoded certificate.
    public init(certificateDER: [UInt8]) throws(CryptoError) {
        bytes = try Digest.hash(.sha256, certificateDER)
    }

    /// The hex pairs, upper case, joined by colons (no hash name).
    public var hexPairs: String { Hex.encode(bytes, uppercase: true, separator: UInt8(ascii: ":")) }

    /// The RFC 8122 text form for SDP: `sha-256 AB:CD:…`.
    public var sdpValue: String { "\(Self.algorithm) \(hexPairs)" }

    /// A short form for error messages and logs: the first three and last two bytes.
    public var abbreviated: String {
        let colon = UInt8(ascii: ":")
        return Hex.encode(bytes.prefix(3), uppercase: true, separator: colon) + "…" + Hex.encode(bytes.suffix(2), uppercase: true, separator: colon)
    }

    public var description: String { sdpValue }

    private enum CodingKeys: String, CodingKey { case algorithm, fingerprint }

    /// JSON form: `{"algorithm": "sha-256", "fingerprint": "ab:cd:…"}` (lower-case hex).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.algorithm, forKey: .algorithm)
        try container.encode(hexPairs.lowercased(), forKey: .fingerprint)
    }
}
