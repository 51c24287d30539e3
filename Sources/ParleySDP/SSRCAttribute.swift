/// `a=ssrc:<ssrc-id> <attribute>[:<value>]` (RFC 5576 §4.1), e.g.
/// `a=ssrc:1253798812 cname:cUXoQlKWT42n4xWB`.
public struct SSRCAttribute: SDPAttributeValue {
    public static let attributeName = "ssrc"

    public var ssrc: UInt32
    /// `cname`, `msid`, `label`, ...
    public var attribute: String
    /// Everything after the colon, as written.
    public var value: String?

    public init(ssrc: UInt32, attribute: String, value: String? = nil) {
        self.ssrc = ssrc
        self.attribute = attribute
        self.value = value
    }

    public init(attributeValue: String) throws(SDPError) {
        guard let space = SDPText.firstIndex(of: UInt8(ascii: " "), in: attributeValue) else {
            throw .malformed(Self.self, "expected <ssrc> <attribute>[:<value>], found \(SDPText.quote(attributeValue))")
        }
        guard let ssrc = SDPText.decimal(SDPText.before(space, in: attributeValue), as: UInt32.self) else {
            throw .malformed(Self.self, "ssrc \(SDPText.quote(SDPText.before(space, in: attributeValue))) is not a number 0-4294967295")
        }
        let rest = SDPText.after(space, in: attributeValue)
        let name: Substring
        var value: String? = nil
        if let colon = SDPText.firstIndex(of: UInt8(ascii: ":"), in: rest) {
            name = SDPText.before(colon, in: rest)
            value = String(SDPText.after(colon, in: rest))
        } else {
            name = rest
        }
        guard SDPText.isToken(name) else {
            throw .malformed(Self.self, "attribute name \(SDPText.quote(name)) is empty or not a token")
        }
        self.init(ssrc: ssrc, attribute: String(name), value: value)
    }

    public var attributeValue: String {
        var out = "\(ssrc) \(attribute)"
        if let value { out += ":" + value }
        return out
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(ssrc, forKey: .ssrc)
        try c.encode(attribute, forKey: .attribute)
        try c.encode(value, forKey: .value)
    }

    private enum CodingKeys: String, CodingKey { case ssrc, attribute, value }
}

/// `a=ssrc-group:<semantics> <ssrc-id> ...` (RFC 5576 §4.2), e.g. `FID 1 2`.
public struct SSRCGroup: SDPAttributeValue {
    public static let attributeName = "ssrc-group"

    public var semantics: String
    public var ssrcs: [UInt32]

    public init(semantics: String, ssrcs: [UInt32]) {
        self.semantics = semantics
        self.ssrcs = ssrcs
    }

    public init(attributeValue: String) throws(SDPError) {
        let fields = SDPText.looseFields(Substring(attributeValue))
        guard let first = fields.first, SDPText.isToken(first) else {
            throw .malformed(Self.self, "expected <semantics> <ssrc> ..., found \(SDPText.quote(attributeValue))")
        }
        var ssrcs: [UInt32] = []
        for field in fields.dropFirst() {
            guard let ssrc = SDPText.decimal(field, as: UInt32.self) else {
                throw .malformed(Self.self, "ssrc \(SDPText.quote(field)) is not a number 0-4294967295")
            }
            ssrcs.append(ssrc)
        }
        self.init(semantics: String(first), ssrcs: ssrcs)
    }

    public var attributeValue: String {
        ([semantics] + ssrcs.map { String($0) }).joined(separator: " ")
    }
}

/// `a=rtcp:<port> [<nettype> <addrtype> <connection-address>]` (RFC 3605 §2.1): where
/// RTCP goes when it is not on RTP port + 1.
public struct RTCPAttribute: SDPAttributeValue {
    public static let attributeName = "rtcp"

    public var port: UInt16
    public var connection: SessionDescription.Connection?

    public init(port: UInt16, connection: SessionDescription.Connection? = nil) {
        self.port = port
        self.connection = connection
    }

    public init(attributeValue: String) throws(SDPError) {
        let fields = SDPText.looseFields(Substring(attributeValue))
        guard fields.count == 1 || fields.count == 4 else {
            throw .malformed(Self.self, "expected <port> [<nettype> <addrtype> <address>], found \(SDPText.quote(attributeValue))")
        }
        guard let port = SDPText.decimal(fields[0], as: UInt16.self) else {
            throw .malformed(Self.self, "port \(SDPText.quote(fields[0])) is not a number 0-65535")
        }
        var connection: SessionDescription.Connection? = nil
        if fields.count == 4 {
            connection = .init(networkType: String(fields[1]), addressType: String(fields[2]), address: String(fields[3]))
        }
        self.init(port: port, connection: connection)
    }

    public var attributeValue: String {
        var out = String(port)
        if let connection { out += " " + connection.lineValue }
        return out
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(port, forKey: .port)
        try c.encode(connection, forKey: .connection)
    }

    private enum CodingKeys: String, CodingKey { case port, connection }
}
