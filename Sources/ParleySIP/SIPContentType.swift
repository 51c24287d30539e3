/// A media type with its parameters (Content-Type, RFC 3261 §20.15; the same grammar in
/// the headers of a multipart body's parts): `application/sdp`,
/// `multipart/mixed;boundary=7a9cbec02ceef655`.
public struct SIPContentType: Sendable, Hashable, CustomStringConvertible {
    /// The type as written (`application`); types compare case-insensitively.
    public let type: String
    /// The subtype as written (`sdp`).
    public let subtype: String
    /// The parameters in order.
    public let parameters: [SIPParameter]

    /// A media type; throws `invalidArgument` when type or subtype is not a token.
    public init(type: String, subtype: String, parameters: [SIPParameter] = []) throws(SIPError) {
        guard SIPGrammar.isToken(type), SIPGrammar.isToken(subtype) else {
            throw SIPError(.invalidArgument, "\(SIPGrammar.quote(type + "/" + subtype)) is not a media type")
        }
        self.type = type
        self.subtype = subtype
        self.parameters = parameters
    }

    /// `application/sdp`.
    public static let sdp = SIPContentType(checkedType: "application", subtype: "sdp")

    private init(checkedType: String, subtype: String, parameters: [SIPParameter] = []) {
        self.type = checkedType
        self.subtype = subtype
        self.parameters = parameters
    }

    /// Parses `m-type SLASH m-subtype *(SEMI m-parameter)`.
    public init(parsing text: some StringProtocol) throws(SIPError) {
        var scanner = SIPValueScanner(text)
        scanner.skipWhitespace()
        guard let type = scanner.tokenString(), scanner.separator(UInt8(ascii: "/")), let subtype = scanner.tokenString() else {
            throw SIPError(.malformedHeader, "\(SIPGrammar.quote(text)) is not type/subtype")
        }
        let parameters = try scanner.parameters()
        try scanner.expectEnd("the media type")
        self.init(checkedType: type, subtype: subtype, parameters: parameters)
    }

    /// Whether this is `type/subtype`, compared case-insensitively.
    public func matches(type: String, subtype: String) -> Bool {
        SIPGrammar.equalsIgnoringCase(self.type, type) && SIPGrammar.equalsIgnoringCase(self.subtype, subtype)
    }

    /// `application/sdp`.
    public var isSDP: Bool { matches(type: "application", subtype: "sdp") }
    /// Any `multipart/...`.
    public var isMultipart: Bool { SIPGrammar.equalsIgnoringCase(type, "multipart") }
    /// The `boundary` parameter of a multipart type.
    public var boundary: String? { parameters.first(named: "boundary")?.value }
    /// The parameter named `name` (any case).
    public func parameter(named name: String) -> SIPParameter? { parameters.first(named: name) }

    /// `type/subtype;params`.
    public var description: String { type + "/" + subtype + parameters.serialized }
}
