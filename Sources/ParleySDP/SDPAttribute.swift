/// One `a=` line: `a=<name>` (a flag such as `rtcp-mux`) or `a=<name>:<value>`
/// (RFC 8866 §5.13). The value is kept exactly as written; typed views come from
/// `SDPAttributeValue` types such as `RTPMap` and `ICECandidate`.
public struct SDPAttribute: Sendable, Hashable, CustomStringConvertible {
    /// The attribute name, before the first colon.
    public var name: String
    /// Everything after the first colon; nil for a flag attribute (no colon at all).
    public var value: String?
    /// The 1-based line this attribute was parsed from, for error messages. Not part
    /// of equality, hashing or JSON: it says where, not what.
    public var line: Int?

    public init(name: String, value: String? = nil) {
        self.name = name
        self.value = value
        self.line = nil
    }

    init(name: String, value: String?, line: Int) {
        self.name = name
        self.value = value
        self.line = line
    }

    /// An attribute holding a typed value, e.g. `SDPAttribute(RTPMap(...))`.
    public init<T: SDPAttributeValue>(_ typed: T) {
        self.init(name: T.attributeName, value: typed.attributeValue)
    }

    /// Parses the value as `T`.
    /// - Throws: `SDPError` of kind `.malformedAttribute` naming this attribute's line.
    public func parsed<T: SDPAttributeValue>(as type: T.Type) throws(SDPError) -> T {
        do {
            return try T(attributeValue: value ?? "")
        } catch {
            throw error.at(line: line)
        }
    }

    /// The text after `a=`.
    var lineValue: String {
        if let value { return name + ":" + value }
        return name
    }

    /// The line as written: `a=name:value`.
    public var description: String { "a=" + lineValue }

    public static func == (lhs: SDPAttribute, rhs: SDPAttribute) -> Bool {
        lhs.name == rhs.name && lhs.value == rhs.value
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(value)
    }
}

/// A typed view of one attribute's value.
public protocol SDPAttributeValue: Sendable, Hashable, Encodable {
    /// The `a=` name this type reads, e.g. `rtpmap`.
    static var attributeName: String { get }
    /// Parses the text after `a=<name>:`.
    /// - Throws: `SDPError` of kind `.malformedAttribute` (with no line number: the
    ///   text alone does not know it; `SDPAttribute.parsed(as:)` adds it).
    init(attributeValue: String) throws(SDPError)
    /// The text after `a=<name>:` that `init(attributeValue:)` reads back to an equal value.
    var attributeValue: String { get }
}

/// Session and media sections both hold attributes; these readers work on either.
public protocol SDPAttributeContainer {
    var attributes: [SDPAttribute] { get }
}

extension SDPAttributeContainer {
    /// The first attribute called `name`.
    public func attribute(named name: String) -> SDPAttribute? {
        attributes.first { $0.name == name }
    }

    /// Every attribute called `name`, in order.
    public func attributes(named name: String) -> [SDPAttribute] {
        attributes.filter { $0.name == name }
    }

    /// True when an attribute called `name` is present.
    public func hasAttribute(_ name: String) -> Bool {
        attributes.contains { $0.name == name }
    }

    /// Every attribute of `T`'s name, parsed.
    /// - Throws: `SDPError` (`.malformedAttribute`) for the first that does not parse.
    public func values<T: SDPAttributeValue>(_ type: T.Type) throws(SDPError) -> [T] {
        var out: [T] = []
        for attribute in attributes where attribute.name == T.attributeName {
            out.append(try attribute.parsed(as: T.self))
        }
        return out
    }

    /// The first attribute of `T`'s name, parsed.
    public func value<T: SDPAttributeValue>(_ type: T.Type) throws(SDPError) -> T? {
        guard let attribute = attributes.first(where: { $0.name == T.attributeName }) else { return nil }
        return try attribute.parsed(as: T.self)
    }

    /// `a=ice-ufrag` (RFC 8839 §5.4).
    public var iceUsernameFragment: String? { attribute(named: "ice-ufrag")?.value }
    /// `a=ice-pwd` (RFC 8839 §5.4).
    public var icePassword: String? { attribute(named: "ice-pwd")?.value }
    /// The tokens of every `a=ice-options` (RFC 8839 §5.6), e.g. `trickle`.
    public var iceOptions: [String] {
        attributes(named: "ice-options").flatMap { SDPText.looseFields(Substring($0.value ?? "")).map(String.init) }
    }
    /// `a=fingerprint` lines (RFC 8122 §5).
    public func fingerprints() throws(SDPError) -> [Fingerprint] { try values(Fingerprint.self) }
    /// `a=setup` (RFC 4145 §4, RFC 8842).
    public func setup() throws(SDPError) -> DTLSSetup? { try value(DTLSSetup.self) }
    /// The last direction attribute written here (RFC 8866 §6.7), nil when none is.
    public var explicitDirection: MediaDirection? {
        for attribute in attributes.reversed() where attribute.value == nil {
            if let direction = MediaDirection(rawValue: attribute.name) { return direction }
        }
        return nil
    }
}
