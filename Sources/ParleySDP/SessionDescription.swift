/// A whole SDP session description (RFC 8866): the session-level lines, then one
/// `MediaDescription` per `m=` section.
///
/// Every line is kept, attributes in their original order and unknown ones included,
/// so `SessionDescription(parsing: x).serialized() == x` for any `x` that parses and is
/// written canonically: CRLF line endings, no trailing blank lines, no leading zeros in
/// the numbers of `m=`, `t=` and `b=` lines. Other input parses to the value it means
/// and serializes in that canonical form; re-parsing always gives an equal value.
///
/// ```
/// v=0                                  version
/// o=- 4611 2 IN IP4 127.0.0.1          origin
/// s=-                                  session name
/// [i= u= e=* p=* c= b=*]
/// t=0 0  [r=*]                         timing (one or more)
/// [z= k=] a=*                          session attributes
/// m=audio 9 UDP/TLS/RTP/SAVPF 111 0    media section (zero or more), each with
///   [i= c=* b=* k=] a=*                its own lines
/// ```
public struct SessionDescription: Sendable, Hashable, SDPAttributeContainer, CustomStringConvertible {
    /// `v=`; always 0 in parsed input.
    public var version: Int
    public var origin: Origin
    /// `s=`; `-` when there is nothing to say.
    public var sessionName: String
    /// `i=`
    public var information: String?
    /// `u=`
    public var uri: String?
    /// `e=` lines.
    public var emails: [String]
    /// `p=` lines.
    public var phones: [String]
    /// Session-level `c=`.
    public var connection: Connection?
    /// Session-level `b=` lines.
    public var bandwidths: [Bandwidth]
    /// `t=` lines, each with its `r=` lines. RFC 8866 requires at least one; parsing
    /// tolerates none (some SIP stacks omit it) and serializing then writes none.
    public var timings: [Timing]
    /// `z=`, as written.
    public var timeZones: String?
    /// Session-level `k=` (obsolete, kept for round trips).
    public var encryptionKey: String?
    /// Session-level `a=` lines, in order.
    public var attributes: [SDPAttribute]
    /// The `m=` sections, in order.
    public var media: [MediaDescription]

    public init(
        version: Int = 0,
        origin: Origin,
        sessionName: String = "-",
        information: String? = nil,
        uri: String? = nil,
        emails: [String] = [],
        phones: [String] = [],
        connection: Connection? = nil,
        bandwidths: [Bandwidth] = [],
        timings: [Timing] = [Timing()],
        timeZones: String? = nil,
        encryptionKey: String? = nil,
        attributes: [SDPAttribute] = [],
        media: [MediaDescription] = []
    ) {
        self.version = version
        self.origin = origin
        self.sessionName = sessionName
        self.information = information
        self.uri = uri
        self.emails = emails
        self.phones = phones
        self.connection = connection
        self.bandwidths = bandwidths
        self.timings = timings
        self.timeZones = timeZones
        self.encryptionKey = encryptionKey
        self.attributes = attributes
        self.media = media
    }

    /// Parses SDP text. Lines end in CRLF or LF; a missing final line ending and
    /// trailing empty lines are tolerated.
    /// - Throws: `SDPError` naming the line and what is wrong.
    public init(parsing text: String, limits: SDPLimits = .default) throws(SDPError) {
        self = try SessionDescriptionParser.parse(Array(text.utf8), limits: limits)
    }

    /// Parses SDP bytes (UTF-8). See `init(parsing:limits:)`.
    public init(parsing bytes: some Collection<UInt8>, limits: SDPLimits = .default) throws(SDPError) {
        self = try SessionDescriptionParser.parse(Array(bytes), limits: limits)
    }

    /// The description as SDP text, every line ending in CRLF.
    public func serialized() -> String {
        String(decoding: serializedBytes(), as: UTF8.self)
    }

    /// The description as UTF-8 bytes, every line ending in CRLF.
    public func serializedBytes() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256 + 48 * (attributes.count + media.reduce(0) { $0 + $1.attributes.count + 4 }))
        func line(_ type: UInt8, _ value: String) {
            out.append(type)
            out.append(UInt8(ascii: "="))
            out.append(contentsOf: value.utf8)
            out.append(UInt8(ascii: "\r"))
            out.append(UInt8(ascii: "\n"))
        }
        func attributeLine(_ attribute: SDPAttribute) {
            out.append(UInt8(ascii: "a"))
            out.append(UInt8(ascii: "="))
            out.append(contentsOf: attribute.name.utf8)
            if let value = attribute.value {
                out.append(UInt8(ascii: ":"))
                out.append(contentsOf: value.utf8)
            }
            out.append(UInt8(ascii: "\r"))
            out.append(UInt8(ascii: "\n"))
        }
        line(UInt8(ascii: "v"), String(version))
        line(UInt8(ascii: "o"), origin.lineValue)
        line(UInt8(ascii: "s"), sessionName)
        if let information { line(UInt8(ascii: "i"), information) }
        if let uri { line(UInt8(ascii: "u"), uri) }
        for email in emails { line(UInt8(ascii: "e"), email) }
        for phone in phones { line(UInt8(ascii: "p"), phone) }
        if let connection { line(UInt8(ascii: "c"), connection.lineValue) }
        for bandwidth in bandwidths { line(UInt8(ascii: "b"), bandwidth.lineValue) }
        for timing in timings {
            line(UInt8(ascii: "t"), "\(timing.start) \(timing.stop)")
            for value in timing.repeats { line(UInt8(ascii: "r"), value) }
        }
        if let timeZones { line(UInt8(ascii: "z"), timeZones) }
        if let encryptionKey { line(UInt8(ascii: "k"), encryptionKey) }
        for attribute in attributes { attributeLine(attribute) }
        for section in media {
            line(UInt8(ascii: "m"), section.lineValue)
            if let information = section.information { line(UInt8(ascii: "i"), information) }
            for connection in section.connections { line(UInt8(ascii: "c"), connection.lineValue) }
            for bandwidth in section.bandwidths { line(UInt8(ascii: "b"), bandwidth.lineValue) }
            if let key = section.encryptionKey { line(UInt8(ascii: "k"), key) }
            for attribute in section.attributes { attributeLine(attribute) }
        }
        return out
    }

    /// The SDP text (same as `serialized()`).
    public var description: String { serialized() }

    /// The `a=group` attributes (RFC 5888), for example BUNDLE.
    public func groups() throws(SDPError) -> [SDPGroup] {
        try values(SDPGroup.self)
    }

    /// The first `a=group:BUNDLE` (RFC 8843), if any.
    public func bundleGroup() throws(SDPError) -> SDPGroup? {
        try groups().first { $0.semantics == "BUNDLE" }
    }

    /// `a=ice-lite` at session level (RFC 8839 §5.3).
    public var isICELite: Bool { hasAttribute("ice-lite") }
}
