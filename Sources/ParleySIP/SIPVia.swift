/// One Via value (RFC 3261 §20.42, §25.1 `via-parm`): the sent-protocol, the sent-by
/// host and port, and the parameters (`branch`, `received`, `rport` of RFC 3581, `maddr`,
/// `ttl`, any other).
///
/// Whitespace is allowed around the `/` and `:` separators and the parameters' `;` and
/// `=` (RFC 4475 §3.1.1.1). An IPv6 sent-by is in brackets; `received` holds a bare IPv6
/// address (§20.42), though a bracketed one is accepted too (RFC 5118 §4.5).
public struct SIPVia: Sendable, Hashable, CustomStringConvertible {
    /// How the request asks for the response's port (RFC 3581).
    public enum ReturnPort: Sendable, Hashable {
        /// `;rport` without a value: the client asks the server to fill it in.
        case requested
        /// `;rport=5061`: the source port the server saw.
        case port(UInt16)
    }

    /// The RFC 3261 branch prefix: a branch starting with it is a transaction id (§8.1.1.7).
    public static let magicCookie = "z9hG4bK"

    /// `SIP` in practice.
    public let protocolName: String
    /// `2.0` in practice.
    public let protocolVersion: String
    /// `UDP`, `TCP`, `TLS`, `SCTP`, `WS`... as written.
    public let transport: String
    /// The sent-by host.
    public let host: SIPHost
    /// The sent-by port, when written.
    public let port: UInt16?
    /// The parameters in order.
    public private(set) var parameters: [SIPParameter]

    /// A `SIP/2.0/<transport>` Via, with a branch when given.
    public init(transport: String, host: SIPHost, port: UInt16? = nil, branch: String? = nil,
                parameters: [SIPParameter] = []) throws(SIPError) {
        guard SIPGrammar.isToken(transport) else { throw SIPError(.invalidArgument, "transport \(SIPGrammar.quote(transport)) is not a token") }
        guard (try? SIPHost.parse(Array(host.description.utf8)[...], bracketsRequired: true)) == host else {
            throw SIPError(.invalidArgument, "host \(SIPGrammar.quote(host.description)) is not a valid host")
        }
        self.protocolName = "SIP"
        self.protocolVersion = "2.0"
        self.transport = transport
        self.host = host
        self.port = port
        self.parameters = []
        if let branch { self.parameters.append(try SIPParameter(name: "branch", value: branch)) }
        for parameter in parameters { self.parameters.set(parameter) }
    }

    /// Parses one via-parm (not a comma-separated list; see `SIPMessage.vias()`).
    public init(parsing text: some StringProtocol) throws(SIPError) {
        var scanner = SIPValueScanner(text)
        self = try Self.parse(&scanner, parametersToo: true)
        try scanner.expectEnd("the Via")
    }

    private init(protocolName: String, protocolVersion: String, transport: String, host: SIPHost, port: UInt16?, parameters: [SIPParameter]) {
        self.protocolName = protocolName
        self.protocolVersion = protocolVersion
        self.transport = transport
        self.host = host
        self.port = port
        self.parameters = parameters
    }

    /// The `branch` parameter.
    public var branch: String? { parameters.first(named: "branch")?.value }

    /// Whether the branch is an RFC 3261 transaction id: the magic cookie and something
    /// after it (RFC 4475 §3.2.1's bare `z9hG4bK` is not one).
    public var hasRFC3261Branch: Bool {
        guard let branch else { return false }
        return branch.hasPrefix(Self.magicCookie) && branch.utf8.count > Self.magicCookie.utf8.count
    }

    /// The `received` address (checked when the Via was parsed).
    public var received: SIPHost? {
        parameters.first(named: "received")?.value.flatMap { try? SIPHost.parse(Array($0.utf8)[...], bracketsRequired: false) }
    }

    /// The `rport` parameter.
    public var returnPort: ReturnPort? {
        guard let parameter = parameters.first(named: "rport") else { return nil }
        guard let text = parameter.value else { return .requested }
        return SIPGrammar.decimal(text, as: UInt16.self, maxDigits: 10).map(ReturnPort.port)
    }

    /// The `maddr` parameter.
    public var maddr: String? { parameters.first(named: "maddr")?.value }

    /// The `ttl` parameter.
    public var ttl: UInt8? { parameters.first(named: "ttl")?.value.flatMap { SIPGrammar.decimal($0, as: UInt8.self, maxDigits: 3) } }

    /// Records the source address a server saw (RFC 3261 §18.2.1), written bare.
    public mutating func setReceived(_ address: SIPHost) throws(SIPError) {
        guard address.addressBytes != nil else { throw SIPError(.invalidArgument, "received must be an IP address") }
        parameters.set(SIPParameter(checkedName: "received", value: address.text, quoted: false))
    }

    /// Records the source port a server saw (RFC 3581 §4).
    public mutating func setReturnPort(_ port: UInt16) {
        parameters.set(SIPParameter(checkedName: "rport", value: String(port), quoted: false))
    }

    /// Sets any parameter, replacing one of the same name.
    public mutating func setParameter(_ parameter: SIPParameter) { parameters.set(parameter) }

    /// `SIP/2.0/UDP host:port;params`.
    public var description: String {
        var out = protocolName + "/" + protocolVersion + "/" + transport + " " + host.description
        if let port { out += ":" + String(port) }
        return out + parameters.serialized
    }

    // MARK: Parsing

    /// `sent-protocol LWS sent-by`, then the parameters when `parametersToo`.
    static func parse(_ scanner: inout SIPValueScanner, parametersToo: Bool) throws(SIPError) -> SIPVia {
        scanner.skipWhitespace()
        guard let name = scanner.tokenString(), scanner.separator(UInt8(ascii: "/")),
              let version = scanner.tokenString(), scanner.separator(UInt8(ascii: "/")),
              let transport = scanner.tokenString() else {
            throw SIPError(.malformedHeader, "malformed sent-protocol \(SIPGrammar.quote(scanner.bytes[...]))")
        }
        let beforeSpace = scanner.index
        scanner.skipWhitespace()
        guard scanner.index > beforeSpace else { throw SIPError(.malformedHeader, "no space before the sent-by") }
        let hostStart = scanner.index
        if scanner.peek == UInt8(ascii: "[") {
            _ = scanner.run { $0 == UInt8(ascii: "]") }
            guard scanner.consume(UInt8(ascii: "]")) else { throw SIPError(.malformedHeader, "unterminated IPv6 reference") }
        } else {
            _ = scanner.run {
                $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ";") || $0 == UInt8(ascii: ",") || SIPGrammar.isWhitespace($0)
            }
        }
        let hostBytes = scanner.bytes[hostStart..<scanner.index]
        let host: SIPHost
        do throws(SIPError) {
            host = try SIPHost.parse(hostBytes, bracketsRequired: true)
        } catch {
            throw SIPError(.malformedHeader, "bad sent-by host: \(error.detail)")
        }
        var port: UInt16?
        if scanner.separator(UInt8(ascii: ":")) {
            guard let digits = scanner.token(), let value = SIPGrammar.decimal(digits, as: UInt16.self, maxDigits: 10) else {
                throw SIPError(.malformedHeader, "bad sent-by port")
            }
            port = value
        }
        var parameters: [SIPParameter] = []
        if parametersToo {
            parameters = try scanner.parameters()
            try check(parameters)
        }
        return SIPVia(protocolName: name, protocolVersion: version, transport: transport, host: host, port: port, parameters: parameters)
    }

    /// The values RFC 3261 §20.42 and RFC 3581 constrain.
    private static func check(_ parameters: [SIPParameter]) throws(SIPError) {
        for parameter in parameters {
            switch SIPGrammar.lowercased(parameter.name) {
            case "branch":
                guard parameter.value != nil, !parameter.isQuoted else { throw SIPError(.malformedHeader, "branch without a token value") }
            case "received":
                guard let value = parameter.value, !parameter.isQuoted,
                      let host = try? SIPHost.parse(Array(value.utf8)[...], bracketsRequired: false), host.addressBytes != nil else {
                    throw SIPError(.malformedHeader, "received is not an IP address")
                }
            case "ttl":
                guard let value = parameter.value, SIPGrammar.decimal(value, as: UInt8.self, maxDigits: 3) != nil else {
                    throw SIPError(.malformedHeader, "ttl is not 0-255")
                }
            case "rport":
                if let value = parameter.value, parameter.isQuoted || SIPGrammar.decimal(value, as: UInt16.self, maxDigits: 10) == nil {
                    throw SIPError(.malformedHeader, "rport is not a port")
                }
            case "maddr":
                guard let value = parameter.value, !parameter.isQuoted,
                      (try? SIPHost.parse(Array(value.utf8)[...], bracketsRequired: false)) != nil else {
                    throw SIPError(.malformedHeader, "maddr is not a host")
                }
            default:
                break
            }
        }
    }

    /// Parses every Via value of `elements` (each one comma-separated element).
    static func parseList(_ elements: [Substring]) throws(SIPError) -> [SIPVia] {
        var vias: [SIPVia] = []
        for element in elements {
            guard !element.isEmpty else { throw SIPError(.malformedHeader, "empty Via value") }
            vias.append(try SIPVia(parsing: element))
        }
        return vias
    }

    /// Whether the first Via value names a sent-protocol and sent-by a response can be sent
    /// to (RFC 3261 §18.2.2), whatever its parameters look like: the test for answering a
    /// bad request rather than dropping it.
    static func hasUsableTopVia(_ headers: SIPHeaders) -> Bool {
        guard let value = headers.first("via") else { return false }
        let element = SIPHeaders.splitList(value).first ?? ""
        var scanner = SIPValueScanner(element)
        guard (try? parse(&scanner, parametersToo: false)) != nil else { return false }
        scanner.skipWhitespace()
        return scanner.isAtEnd || scanner.peek == UInt8(ascii: ";")
    }
}
