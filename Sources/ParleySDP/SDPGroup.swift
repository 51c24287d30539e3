/// `a=group:<semantics> <identification-tag> ...` (RFC 5888 §5), e.g.
/// `a=group:BUNDLE 0 1` (RFC 8843): the `a=mid` values of the grouped sections.
public struct SDPGroup: SDPAttributeValue {
    public static let attributeName = "group"

    /// `BUNDLE`, `LS`, `FID`, ...
    public var semantics: String
    /// The `mid`s, in order.
    public var identifiers: [String]

    public init(semantics: String, identifiers: [String]) {
        self.semantics = semantics
        self.identifiers = identifiers
    }

    public init(attributeValue: String) throws(SDPError) {
        let fields = SDPText.looseFields(Substring(attributeValue))
        guard let first = fields.first, SDPText.isToken(first) else {
            throw .malformed(Self.self, "expected <semantics> [<mid> ...], found \(SDPText.quote(attributeValue))")
        }
        self.init(semantics: String(first), identifiers: fields.dropFirst().map(String.init))
    }

    public var attributeValue: String {
        ([semantics] + identifiers).joined(separator: " ")
    }
}

/// `a=msid:<stream id> [<track id>]` (RFC 8830 §2): which MediaStream and track a
/// section's media belongs to.
public struct MSID: SDPAttributeValue {
    public static let attributeName = "msid"

    /// The MediaStream id (`-` for none).
    public var streamID: String
    /// The track id ("appdata"), when written.
    public var trackID: String?

    public init(streamID: String, trackID: String? = nil) {
        self.streamID = streamID
        self.trackID = trackID
    }

    public init(attributeValue: String) throws(SDPError) {
        let fields = SDPText.looseFields(Substring(attributeValue))
        guard fields.count == 1 || fields.count == 2 else {
            throw .malformed(Self.self, "expected <stream id> [<track id>], found \(SDPText.quote(attributeValue))")
        }
        self.init(streamID: String(fields[0]), trackID: fields.count == 2 ? String(fields[1]) : nil)
    }

    public var attributeValue: String {
        trackID.map { streamID + " " + $0 } ?? streamID
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(streamID, forKey: .streamID)
        try c.encode(trackID, forKey: .trackID)
    }

    private enum CodingKeys: String, CodingKey { case streamID, trackID }
}
