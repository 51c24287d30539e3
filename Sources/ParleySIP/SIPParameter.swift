/// A header parameter (`;tag=8321234356`, `;lr`, `;+sip.instance="<urn:uuid:...>"`):
/// RFC 3261 §25.1 `generic-param`, a token name with an optional token, host or
/// quoted-string value.
public struct SIPParameter: Sendable, Hashable, CustomStringConvertible {
    /// The name as written (names compare case-insensitively).
    public let name: String
    /// The value, with a quoted-string's quotes and quoted-pairs removed; nil for a flag.
    public let value: String?
    /// Whether the value is written as a quoted-string.
    public let isQuoted: Bool

    /// A parameter; throws `invalidArgument` when the name is not a token, or an unquoted
    /// value is neither a token nor a host, or a quoted value holds CR or LF.
    public init(name: String, value: String? = nil, quoted: Bool = false) throws(SIPError) {
        guard SIPGrammar.isToken(name) else {
            throw SIPError(.invalidArgument, "parameter name \(SIPGrammar.quote(name)) is not a token")
        }
        if let value {
            if quoted {
                guard SIPGrammar.quoted(value) != nil else {
                    throw SIPError(.invalidArgument, "parameter \(name) holds a line break")
                }
            } else if !SIPGrammar.isToken(value) && (try? SIPHost.parse(Array(value.utf8)[...], bracketsRequired: true)) == nil {
                throw SIPError(.invalidArgument, "value of parameter \(name) is neither a token nor a host; quote it")
            }
        }
        self.init(checkedName: name, value: value, quoted: quoted && value != nil)
    }

    init(checkedName: String, value: String?, quoted: Bool) {
        self.name = checkedName
        self.value = value
        self.isQuoted = quoted
    }

    /// `name`, `name=value` or `name="value"` as written in a header.
    public var description: String {
        guard let value else { return name }
        if isQuoted { return name + "=" + (SIPGrammar.quoted(value) ?? "\"\"") }
        return name + "=" + value
    }
}

extension Array where Element == SIPParameter {
    /// The first parameter named `name` (any case).
    func first(named name: String) -> SIPParameter? {
        first { SIPGrammar.equalsIgnoringCase($0.name, name) }
    }

    /// Sets `name` to `value`, replacing the first of that name or appending.
    mutating func set(_ parameter: SIPParameter) {
        if let index = firstIndex(where: { SIPGrammar.equalsIgnoringCase($0.name, parameter.name) }) {
            self[index] = parameter
        } else {
            append(parameter)
        }
    }

    /// `;a=b;c` as written after a header value.
    var serialized: String { map { ";" + $0.description }.joined() }
}
