/// A URI as SIP carries it (RFC 3261 §19.1, §25.1): `sip:` and `sips:` URIs in full, `tel:`
/// URIs (RFC 3966) as a number with parameters, and any other absolute URI kept opaque
/// (`http:`, `urn:`...), so a header naming one still parses and a Request-URI with one
/// can be answered 416.
///
/// Components are kept exactly as written, escapes included, so a URI serializes back to
/// the same text; the decoding accessors (`user`, `password`, `Parameter.name`...) undo
/// the `%` HEX HEX escapes. `==` compares the text; `isEquivalent(to:)` applies the
/// comparison rules of §19.1.4.
public struct SIPURI: Sendable, Hashable, CustomStringConvertible {
    /// The URI scheme. Schemes compare case-insensitively; `other` keeps the text as written.
    public enum Scheme: Sendable, Hashable, CustomStringConvertible {
        case sip, sips, tel
        case other(String)

        public var description: String {
            switch self {
            case .sip: "sip"
            case .sips: "sips"
            case .tel: "tel"
            case .other(let text): text
            }
        }
    }

    /// A `uri-parameter` (`;transport=tcp`, `;lr`), kept as written.
    public struct Parameter: Sendable, Hashable, CustomStringConvertible {
        /// The name as written, escapes included.
        public let escapedName: String
        /// The value as written, or nil for a parameter without `=`.
        public let escapedValue: String?

        /// A parameter from plain text: characters a parameter cannot hold are escaped.
        public init(name: String, value: String? = nil) {
            escapedName = SIPGrammar.escaped(name, allowed: SIPGrammar.isParameterByte)
            escapedValue = value.map { SIPGrammar.escaped($0, allowed: SIPGrammar.isParameterByte) }
        }

        init(escapedName: String, escapedValue: String?) {
            self.escapedName = escapedName
            self.escapedValue = escapedValue
        }

        /// The name with escapes decoded.
        public var name: String { SIPGrammar.unescaped(escapedName) }
        /// The value with escapes decoded.
        public var value: String? { escapedValue.map { SIPGrammar.unescaped($0) } }

        public var description: String { escapedValue.map { escapedName + "=" + $0 } ?? escapedName }
    }

    /// A URI header (`?Subject=hello&Priority=urgent`), kept as written.
    public struct Header: Sendable, Hashable, CustomStringConvertible {
        /// The name as written, escapes included.
        public let escapedName: String
        /// The value as written, escapes included.
        public let escapedValue: String

        /// A header from plain text: characters it cannot hold are escaped (`<` as `%3C`).
        public init(name: String, value: String) {
            escapedName = SIPGrammar.escaped(name, allowed: SIPGrammar.isURIHeaderByte)
            escapedValue = SIPGrammar.escaped(value, allowed: SIPGrammar.isURIHeaderByte)
        }

        init(escapedName: String, escapedValue: String) {
            self.escapedName = escapedName
            self.escapedValue = escapedValue
        }

        /// The name with escapes decoded.
        public var name: String { SIPGrammar.unescaped(escapedName) }
        /// The value with escapes decoded (`%3Csip:x%3E` gives `<sip:x>`).
        public var value: String { SIPGrammar.unescaped(escapedValue) }

        public var description: String { escapedName + "=" + escapedValue }
    }

    /// The scheme.
    public private(set) var scheme: Scheme
    /// The user part as written (for `tel:` the number), escapes included; nil when absent.
    public private(set) var escapedUser: String?
    /// The password as written; nil when absent (RFC 3261 §19.1.1 advises against them).
    public private(set) var escapedPassword: String?
    /// The host of a `sip:`/`sips:` URI; nil for other schemes.
    public private(set) var host: SIPHost?
    /// The port, when one is written.
    public var port: UInt16?
    /// The uri-parameters in order.
    public private(set) var parameters: [Parameter]
    /// The URI headers in order (only `sip:`/`sips:` URIs have them).
    public private(set) var headers: [Header]
    /// For a scheme other than sip, sips and tel: everything after `scheme:`, as written.
    public private(set) var opaquePart: String?

    /// A `sip:` (or with `secure`, `sips:`) URI from plain text: user and password are
    /// escaped where they must be.
    public init(user: String? = nil, password: String? = nil, host: SIPHost, port: UInt16? = nil, secure: Bool = false,
                parameters: [Parameter] = [], headers: [Header] = []) throws(SIPError) {
        guard (try? SIPHost.parse(Array(host.description.utf8)[...], bracketsRequired: true)) == host else {
            throw SIPError(.invalidArgument, "host \(SIPGrammar.quote(host.description)) is not a valid host")
        }
        self.scheme = secure ? .sips : .sip
        self.escapedUser = user.map { SIPGrammar.escaped($0, allowed: SIPGrammar.isUserByte) }
        self.escapedPassword = password.map { SIPGrammar.escaped($0, allowed: SIPGrammar.isPasswordByte) }
        self.host = host
        self.port = port
        self.parameters = parameters
        self.headers = headers
        self.opaquePart = nil
        if escapedUser == "" { throw SIPError(.invalidArgument, "empty user part") }
    }

    /// A `tel:` URI (RFC 3966) for `number` (`+4615550101`, or a local number with a
    /// `phone-context` parameter).
    public init(telephoneNumber number: String, parameters: [Parameter] = []) throws(SIPError) {
        guard Self.isTelephoneNumber(Array(number.utf8)[...]) else {
            throw SIPError(.invalidArgument, "\(SIPGrammar.quote(number)) is not a telephone number")
        }
        self.scheme = .tel
        self.escapedUser = number
        self.escapedPassword = nil
        self.host = nil
        self.port = nil
        self.parameters = parameters
        self.headers = []
        self.opaquePart = nil
    }

    /// Parses a URI: `sip:alice@example.com;transport=tcp`, `tel:+4615550101`, `urn:x`.
    /// Whitespace, angle brackets and quotes are not part of a URI and are refused.
    public init(parsing text: some StringProtocol) throws(SIPError) {
        self = try Self.parse(Array(text.utf8)[...])
    }

    // MARK: Decoded views

    /// The user part (for `tel:` the number) with escapes decoded: `sip:%61lice@x` gives
    /// `alice`, RFC 4475 §3.1.1.4's `null-%00-null` gives a string with a NUL in it.
    public var user: String? { escapedUser.map { SIPGrammar.unescaped($0) } }

    /// The password with escapes decoded.
    public var password: String? { escapedPassword.map { SIPGrammar.unescaped($0) } }

    /// Replaces the user part (plain text; escaped where it must be), or removes it.
    public mutating func setUser(_ user: String?) throws(SIPError) {
        guard scheme == .sip || scheme == .sips else { throw SIPError(.invalidArgument, "only sip and sips URIs have a user part") }
        guard user != "" else { throw SIPError(.invalidArgument, "empty user part") }
        escapedUser = user.map { SIPGrammar.escaped($0, allowed: SIPGrammar.isUserByte) }
        if user == nil { escapedPassword = nil }
    }

    /// The first parameter named `name` (compared case-insensitively, escapes decoded).
    public func parameter(named name: String) -> Parameter? {
        parameters.first { SIPGrammar.equalsIgnoringCase($0.name, name) }
    }

    /// Sets parameter `name` (replacing any of that name, else appending); a nil value
    /// writes a flag (`;lr`).
    public mutating func setParameter(name: String, value: String? = nil) {
        let parameter = Parameter(name: name, value: value)
        if let index = parameters.firstIndex(where: { SIPGrammar.equalsIgnoringCase($0.name, name) }) {
            parameters[index] = parameter
            parameters.removeAll { SIPGrammar.equalsIgnoringCase($0.name, name) && $0 != parameter }
        } else {
            parameters.append(parameter)
        }
    }

    /// Removes every parameter named `name`.
    public mutating func removeParameter(named name: String) {
        parameters.removeAll { SIPGrammar.equalsIgnoringCase($0.name, name) }
    }

    /// Removes every URI header (a Request-URI must have none, RFC 3261 §19.1.5).
    public mutating func removeHeaders() { headers = [] }

    /// `transport` (`udp`, `tcp`, `tls`, `sctp`...), as written.
    public var transport: String? { parameter(named: "transport")?.value }
    /// `user` (`phone`, `ip`, RFC 3261 §19.1.1).
    public var userParameter: String? { parameter(named: "user")?.value }
    /// `maddr`, the address to send to instead of the host.
    public var maddr: String? { parameter(named: "maddr")?.value }
    /// `ttl` (0-255), nil when absent or not a number in range.
    public var ttl: UInt8? { parameter(named: "ttl")?.value.flatMap { SIPGrammar.decimal($0, as: UInt8.self, maxDigits: 3) } }
    /// Whether `lr` is present: the URI is a loose router (RFC 3261 §19.1.1, §16.12).
    public var isLooseRouting: Bool { parameter(named: "lr") != nil }
    /// `method`, the method of a request this URI would start.
    public var method: SIPMethod? {
        guard let value = parameter(named: "method")?.value, SIPGrammar.isToken(value) else { return nil }
        return SIPMethod(token: value)
    }

    /// Whether this is a `sips:` URI.
    public var isSecure: Bool { scheme == .sips }

    // MARK: Text

    public var description: String {
        var out = scheme.description + ":"
        switch scheme {
        case .sip, .sips:
            if let escapedUser {
                out += escapedUser
                if let escapedPassword { out += ":" + escapedPassword }
                out += "@"
            }
            if let host { out += host.description }
            if let port { out += ":" + String(port) }
            for parameter in parameters { out += ";" + parameter.description }
            if !headers.isEmpty { out += "?" + headers.map(\.description).joined(separator: "&") }
        case .tel:
            out += escapedUser ?? ""
            for parameter in parameters { out += ";" + parameter.description }
        case .other:
            out += opaquePart ?? ""
        }
        return out
    }

    // MARK: Parsing

    static func parse(_ bytes: ArraySlice<UInt8>) throws(SIPError) -> SIPURI {
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > bytes.startIndex else {
            throw SIPError(.malformedURI, "\(SIPGrammar.quote(bytes)) has no scheme")
        }
        let schemeBytes = bytes[..<colon]
        guard let first = schemeBytes.first, SIPGrammar.isAlpha(first), schemeBytes.allSatisfy({
            SIPGrammar.isAlphanumeric($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
        }) else {
            throw SIPError(.malformedURI, "\(SIPGrammar.quote(bytes)) does not start with a URI scheme")
        }
        let rest = bytes[(colon + 1)...]
        guard !rest.isEmpty else { throw SIPError(.malformedURI, "nothing after the scheme in \(SIPGrammar.quote(bytes))") }
        let schemeText = String(decoding: schemeBytes, as: UTF8.self)
        switch SIPGrammar.lowercased(schemeText) {
        case "sip": return try parseSIP(rest, scheme: .sip)
        case "sips": return try parseSIP(rest, scheme: .sips)
        case "tel": return try parseTel(rest)
        default:
            guard SIPGrammar.isEscapedText(rest, allowed: { SIPGrammar.isURICByte($0) || $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "]") }) else {
                throw SIPError(.malformedURI, "\(SIPGrammar.quote(bytes)) holds characters a URI cannot")
            }
            return SIPURI(scheme: .other(schemeText), escapedUser: nil, escapedPassword: nil, host: nil, port: nil,
                          parameters: [], headers: [], opaquePart: String(decoding: rest, as: UTF8.self))
        }
    }

    private init(scheme: Scheme, escapedUser: String?, escapedPassword: String?, host: SIPHost?, port: UInt16?,
                 parameters: [Parameter], headers: [Header], opaquePart: String?) {
        self.scheme = scheme
        self.escapedUser = escapedUser
        self.escapedPassword = escapedPassword
        self.host = host
        self.port = port
        self.parameters = parameters
        self.headers = headers
        self.opaquePart = opaquePart
    }

    /// `[ userinfo "@" ] hostport uri-parameters [ headers ]`.
    private static func parseSIP(_ bytes: ArraySlice<UInt8>, scheme: Scheme) throws(SIPError) -> SIPURI {
        var rest = bytes
        var user: String?
        var password: String?
        // "@" can appear nowhere else unescaped, so the first one ends the userinfo.
        if let at = rest.firstIndex(of: UInt8(ascii: "@")) {
            let userinfo = rest[..<at]
            let userBytes: ArraySlice<UInt8>
            if let colon = userinfo.firstIndex(of: UInt8(ascii: ":")) {
                userBytes = userinfo[..<colon]
                let passwordBytes = userinfo[(colon + 1)...]
                guard SIPGrammar.isEscapedText(passwordBytes, allowed: SIPGrammar.isPasswordByte) else {
                    throw SIPError(.malformedURI, "bad password in \(SIPGrammar.quote(bytes))")
                }
                password = String(decoding: passwordBytes, as: UTF8.self)
            } else {
                userBytes = userinfo
            }
            guard !userBytes.isEmpty, SIPGrammar.isEscapedText(userBytes, allowed: SIPGrammar.isUserByte) else {
                throw SIPError(.malformedURI, "bad user part in \(SIPGrammar.quote(bytes))")
            }
            user = String(decoding: userBytes, as: UTF8.self)
            rest = rest[(at + 1)...]
        }
        // The host runs to ":" (outside brackets), ";", "?" or the end.
        var hostEnd = rest.startIndex
        if rest.first == UInt8(ascii: "[") {
            guard let close = rest.firstIndex(of: UInt8(ascii: "]")) else {
                throw SIPError(.malformedURI, "unterminated IPv6 reference in \(SIPGrammar.quote(bytes))")
            }
            hostEnd = close + 1
        } else {
            while hostEnd < rest.endIndex, ![UInt8(ascii: ":"), UInt8(ascii: ";"), UInt8(ascii: "?")].contains(rest[hostEnd]) {
                hostEnd += 1
            }
        }
        let host = try SIPHost.parse(rest[..<hostEnd], bracketsRequired: true)
        rest = rest[hostEnd...]
        var port: UInt16?
        if rest.first == UInt8(ascii: ":") {
            var portEnd = rest.startIndex + 1
            while portEnd < rest.endIndex, SIPGrammar.isDigit(rest[portEnd]) { portEnd += 1 }
            guard let value = SIPGrammar.decimal(rest[(rest.startIndex + 1)..<portEnd], as: UInt16.self, maxDigits: 10) else {
                throw SIPError(.malformedURI, "bad port in \(SIPGrammar.quote(bytes))")
            }
            port = value
            rest = rest[portEnd...]
        }
        var headerBytes: ArraySlice<UInt8>?
        if let question = rest.firstIndex(of: UInt8(ascii: "?")) {
            headerBytes = rest[(question + 1)...]
            rest = rest[..<question]
        }
        var parameters: [Parameter] = []
        if !rest.isEmpty {
            guard rest.first == UInt8(ascii: ";") else {
                throw SIPError(.malformedURI, "unexpected \(SIPGrammar.quote(rest)) after the host in \(SIPGrammar.quote(bytes))")
            }
            parameters = try parseParameters(rest.dropFirst(), in: bytes, nameAllowed: SIPGrammar.isParameterByte)
        }
        var headers: [Header] = []
        if let headerBytes {
            for piece in headerBytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
                guard let equals = piece.firstIndex(of: UInt8(ascii: "=")) else {
                    throw SIPError(.malformedURI, "URI header without \"=\" in \(SIPGrammar.quote(bytes))")
                }
                let name = piece[..<equals]
                let value = piece[(equals + 1)...]
                guard !name.isEmpty, SIPGrammar.isEscapedText(name, allowed: SIPGrammar.isURIHeaderByte),
                      SIPGrammar.isEscapedText(value, allowed: SIPGrammar.isURIHeaderByte) else {
                    throw SIPError(.malformedURI, "bad URI header in \(SIPGrammar.quote(bytes))")
                }
                headers.append(Header(escapedName: String(decoding: name, as: UTF8.self), escapedValue: String(decoding: value, as: UTF8.self)))
            }
        }
        return SIPURI(scheme: scheme, escapedUser: user, escapedPassword: password, host: host, port: port,
                      parameters: parameters, headers: headers, opaquePart: nil)
    }

    /// `*( ";" pname [ "=" pvalue ] )` after the first ";"; names and values non-empty.
    private static func parseParameters(_ bytes: ArraySlice<UInt8>, in whole: ArraySlice<UInt8>, nameAllowed: (UInt8) -> Bool) throws(SIPError) -> [Parameter] {
        var parameters: [Parameter] = []
        for piece in bytes.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false) {
            let name: ArraySlice<UInt8>
            var value: ArraySlice<UInt8>?
            if let equals = piece.firstIndex(of: UInt8(ascii: "=")) {
                name = piece[..<equals]
                value = piece[(equals + 1)...]
            } else {
                name = piece
            }
            guard !name.isEmpty, SIPGrammar.isEscapedText(name, allowed: nameAllowed) else {
                throw SIPError(.malformedURI, "bad parameter name in \(SIPGrammar.quote(whole))")
            }
            if let value {
                guard !value.isEmpty, SIPGrammar.isEscapedText(value, allowed: SIPGrammar.isParameterByte) else {
                    throw SIPError(.malformedURI, "bad parameter value in \(SIPGrammar.quote(whole))")
                }
            }
            parameters.append(Parameter(escapedName: String(decoding: name, as: UTF8.self),
                                        escapedValue: value.map { String(decoding: $0, as: UTF8.self) }))
        }
        return parameters
    }

    /// RFC 3966: `global-number` or `local-number`, then `;name[=value]` parameters.
    private static func parseTel(_ bytes: ArraySlice<UInt8>) throws(SIPError) -> SIPURI {
        let semicolon = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
        let number = bytes[..<semicolon]
        guard isTelephoneNumber(number) else {
            throw SIPError(.malformedURI, "\(SIPGrammar.quote(number)) is not a telephone number")
        }
        var parameters: [Parameter] = []
        if semicolon < bytes.endIndex {
            parameters = try parseParameters(bytes[(semicolon + 1)...], in: bytes) {
                SIPGrammar.isAlphanumeric($0) || $0 == UInt8(ascii: "-")
            }
        }
        return SIPURI(scheme: .tel, escapedUser: String(decoding: number, as: UTF8.self), escapedPassword: nil, host: nil,
                      port: nil, parameters: parameters, headers: [], opaquePart: nil)
    }

    /// `"+" 1*phonedigit` or `1*phonedigit-hex` (digits, visual separators `-.()`, and for
    /// local numbers hex digits, `*`, `#`), with at least one digit.
    static func isTelephoneNumber(_ bytes: ArraySlice<UInt8>) -> Bool {
        var digits = bytes
        let global = digits.first == UInt8(ascii: "+")
        if global { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.count <= 64 else { return false }
        var sawDigit = false
        for byte in digits {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): sawDigit = true
            case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "("), UInt8(ascii: ")"): break
            case UInt8(ascii: "*"), UInt8(ascii: "#"), UInt8(ascii: "A")...UInt8(ascii: "F"), UInt8(ascii: "a")...UInt8(ascii: "f"):
                if global { return false }
                sawDigit = true
            default: return false
            }
        }
        return sawDigit
    }
}
