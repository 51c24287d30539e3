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

    /// Parses the value of an SDP `a=fingerprint:` attribute, e.g. `sha-256 AB:CD:…`.
    ///
    /// The hash name is case-insensitive (RFC 8122 §5 grammar uses a token); hex digits may
    /// be either case; one or more spaces or tabs separate the two parts, and surrounding
    /// white space is ignored. Errors carry the character offset of the problem.
    public init(sdp text: String) throws(CryptoError) {
        let chars = Array(text.unicodeScalars)
        var index = 0
        func isBlank(_ c: Unicode.Scalar) -> Bool { c == " " || c == "\t" }
        while index < chars.count, isBlank(chars[index]) { index += 1 }
        let nameStart = index
        while index < chars.count, !isBlank(chars[index]) { index += 1 }
        let name = String(String.UnicodeScalarView(chars[nameStart..<index])).lowercased()
        guard !name.isEmpty else { throw .invalidFingerprint(offset: nameStart, "missing hash function name") }
        guard name == Self.algorithm else {
            throw .invalidFingerprint(offset: nameStart, "unsupported hash function \"\(name)\": only sha-256 is accepted")
        }
        guard index < chars.count else { throw .invalidFingerprint(offset: index, "missing fingerprint after hash function name") }
        while index < chars.count, isBlank(chars[index]) { index += 1 }
        var end = chars.count
        while end > index, isBlank(chars[end - 1]) { end -= 1 }

        var digest: [UInt8] = []
        while index < end {
            if !digest.isEmpty {
                guard chars[index] == ":" else { throw .invalidFingerprint(offset: index, "expected ':' between hex pairs") }
                index += 1
            }
            guard index + 2 <= end, let high = Self.hexValue(chars[index]), let low = Self.hexValue(chars[index + 1]) else {
                throw .invalidFingerprint(offset: index, "expected two hex digits")
            }
            guard digest.count < DigestAlgorithm.sha256.byteCount else {
                throw .invalidFingerprint(offset: index, "more than 32 bytes for sha-256")
            }
            digest.append(high << 4 | low)
            index += 2
        }
        guard digest.count == DigestAlgorithm.sha256.byteCount else {
            throw .invalidFingerprint(offset: end, "sha-256 fingerprint has \(digest.count) bytes, expected 32")
        }
        bytes = digest
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

    private static func hexValue(_ c: Unicode.Scalar) -> UInt8? {
        switch c.value {
        case 0x30...0x39: return UInt8(c.value - 0x30)
        case 0x41...0x46: return UInt8(c.value - 0x41 + 10)
        case 0x61...0x66: return UInt8(c.value - 0x61 + 10)
        default: return nil
        }
    }
}
