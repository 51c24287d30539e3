/// `a=extmap:<id>[/<direction>] <URI> [<extension attributes>]` (RFC 8285 §5): which
/// RTP header extension uses which local ID, e.g.
/// `a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level`.
public struct ExtensionMap: SDPAttributeValue {
    public static let attributeName = "extmap"

    /// The audio level extension (RFC 6464).
    public static let audioLevelURI = "urn:ietf:params:rtp-hdrext:ssrc-audio-level"
    /// The MID extension BUNDLE uses to route packets (RFC 8843 §15).
    public static let midURI = "urn:ietf:params:rtp-hdrext:sdes:mid"

    /// 1-14 for one-byte headers, up to 255 for two-byte ones.
    public var id: UInt16
    /// The `/direction` suffix, when written.
    public var direction: MediaDirection?
    public var uri: String
    /// Anything after the URI, as written.
    public var extensionAttributes: String?

    public init(id: UInt16, direction: MediaDirection? = nil, uri: String, extensionAttributes: String? = nil) {
        self.id = id
        self.direction = direction
        self.uri = uri
        self.extensionAttributes = extensionAttributes
    }

    public init(attributeValue: String) throws(SDPError) {
        let fields = SDPText.looseFields(Substring(attributeValue))
        guard fields.count >= 2 else {
            throw .malformed(Self.self, "expected <id>[/<direction>] <uri>, found \(SDPText.quote(attributeValue))")
        }
        var idText = fields[0]
        var direction: MediaDirection? = nil
        if let slash = SDPText.firstIndex(of: UInt8(ascii: "/"), in: idText) {
            guard let value = MediaDirection(rawValue: String(SDPText.after(slash, in: idText))) else {
                throw .malformed(Self.self, "direction \(SDPText.quote(SDPText.after(slash, in: idText))) is not sendrecv, sendonly, recvonly or inactive")
            }
            direction = value
            idText = SDPText.before(slash, in: idText)
        }
        guard let id = SDPText.decimal(idText, as: UInt16.self), id >= 1 else {
            throw .malformed(Self.self, "id \(SDPText.quote(idText)) is not a number 1-65535")
        }
        self.init(id: id, direction: direction, uri: String(fields[1]),
                  extensionAttributes: fields.count > 2 ? fields[2...].joined(separator: " ") : nil)
    }

    public var attributeValue: String {
        var out = String(id)
        if let direction { out += "/" + direction.rawValue }
        out += " " + uri
        if let extensionAttributes { out += " " + extensionAttributes }
        return out
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(direction, forKey: .direction)
        try c.encode(uri, forKey: .uri)
        try c.encode(extensionAttributes, forKey: .extensionAttributes)
    }

    private enum CodingKeys: String, CodingKey { case id, direction, uri, extensionAttributes }
}
