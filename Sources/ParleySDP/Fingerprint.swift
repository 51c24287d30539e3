internal import ParleyWireCore

/// `a=fingerprint:<hash function> <hex bytes separated by colons>` (RFC 8122 §5),
/// e.g. `sha-256 B2:1D:...:60`.
///
/// JSON: `{"algorithm": "sha-256", "bytes": "b21d...60"}` (lowercase hex). The DTLS certificate a peer presents must hash to it.
public struct Fingerprint: SDPAttributeValue {
    public static let attributeName = "fingerprint"

    /// The hash function token as written (`sha-256`; compare case-insensitively).
    public var algorithm: String
    /// The digest.
    public var bytes: [UInt8]

    public init(algorithm: String, bytes: [UInt8]) {
        self.algorithm = algorithm
        self.bytes = bytes
    }

    public init(attributeValue: String) throws(SDPError) {
        let fields = SDPText.looseFields(Substring(attributeValue))
        guard fields.count == 2, SDPText.isToken(fields[0]) else {
            throw .malformed(Self.self, "expected <hash function> <fingerprint>, found \(SDPText.quote(attributeValue))")
        }
        var bytes: [UInt8] = []
        for pair in SDPText.split(fields[1], on: UInt8(ascii: ":")) {
            guard pair.utf8.count == 2, pair.utf8.allSatisfy(SDPText.isHexDigit), let byte = UInt8(pair, radix: 16) else {
                throw .malformed(Self.self, "\(SDPText.quote(pair)) is not a two-digit hex byte")
            }
            bytes.append(byte)
        }
        self.init(algorithm: String(fields[0]), bytes: bytes)
    }

    /// Upper-case hex pairs separated by colons (RFC 8122 §5).
    public var attributeValue: String {
        algorithm + " " + Hex.encode(bytes, uppercase: true, separator: UInt8(ascii: ":"))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(algorithm, forKey: .algorithm)
        try c.encode(Hex.encode(bytes), forKey: .bytes)
    }

    private enum CodingKeys: String, CodingKey { case algorithm, bytes }
}
