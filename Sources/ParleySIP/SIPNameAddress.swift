/// An address with an optional display name and header parameters: the value of From,
/// To, Contact, Route, Record-Route, P-Asserted-Identity... (RFC 3261 §20.10, §25.1
/// `(name-addr / addr-spec) *(SEMI generic-param)`).
///
/// Both forms are read: `"Alice" <sip:alice@example.com>;tag=1`, `Alice<sip:...>` (a
/// token display name without the space, which RFC 4475 §3.1.1.6 asks receivers to take),
/// and the bare `sip:alice@example.com;tag=1`, where everything after the URI's first `;`
/// is a header parameter (§20.10; RFC 4475 §3.3.12). A bare URI with `?` headers must be
/// in angle brackets and is refused (RFC 4475 §3.1.2.13), as is whitespace inside the
/// brackets (§3.1.2.14) and an unquoted display name with non-token characters
/// (§3.1.2.15). It is always written in the bracketed form, the display name quoted.
public struct SIPNameAddress: Sendable, Hashable, CustomStringConvertible {
    /// The display name: a quoted-string's text (quotes and quoted-pairs removed), or the
    /// tokens of an unquoted one as written; nil when there is none.
    public private(set) var displayName: String?
    /// The address.
    public var uri: SIPURI
    /// The header parameters in order (`tag`, `expires`, `q`...).
    public private(set) var parameters: [SIPParameter]

    /// An address; throws `invalidArgument` when the display name holds CR or LF.
    public init(displayName: String? = nil, uri: SIPURI, parameters: [SIPParameter] = []) throws(SIPError) {
        if let displayName, SIPGrammar.quoted(displayName) == nil {
            throw SIPError(.invalidArgument, "display name holds a line break")
        }
        self.displayName = displayName
        self.uri = uri
        self.parameters = parameters
    }

    /// Parses one value (not a comma-separated list).
    public init(parsing text: some StringProtocol) throws(SIPError) {
        self = try Self.parse(Array(text.utf8)[...], requireAngleBrackets: false)
    }

    /// The `tag` parameter (From and To, RFC 3261 §19.3).
    public var tag: String? { parameters.first(named: "tag")?.value }

    /// The parameter named `name` (any case).
    public func parameter(named name: String) -> SIPParameter? { parameters.first(named: name) }

    /// Sets a parameter, replacing one of the same name (`tag` on a To).
    public mutating func setParameter(_ parameter: SIPParameter) { parameters.set(parameter) }

    /// Removes every parameter named `name`.
    public mutating func removeParameter(named name: String) {
        parameters.removeAll { SIPGrammar.equalsIgnoringCase($0.name, name) }
    }

    /// A Contact's `expires` (delta-seconds, RFC 3261 §20.10); nil when absent. Throws
    /// when it is not a number below 2^32 (RFC 4475 §3.1.2.4 has 280297596632815).
    public func expires() throws(SIPError) -> UInt32? {
        guard let parameter = parameter(named: "expires") else { return nil }
        guard let text = parameter.value, let value = SIPGrammar.decimal(text, as: UInt32.self) else {
            throw SIPError(.malformedHeader, "expires \(SIPGrammar.quote(parameter.value ?? "")) is not delta-seconds")
        }
        return value
    }

    /// A Contact's `q` in thousandths (0...1000, RFC 3261 §20.10 qvalue); nil when absent.
    public func qValue() throws(SIPError) -> Int? {
        guard let parameter = parameter(named: "q") else { return nil }
        guard let text = parameter.value, let value = Self.thousandths(Array(text.utf8)) else {
            throw SIPError(.malformedHeader, "q \(SIPGrammar.quote(parameter.value ?? "")) is not a qvalue")
        }
        return value
    }

    /// `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`.
    private static func thousandths(_ bytes: [UInt8]) -> Int? {
        guard let first = bytes.first, first == UInt8(ascii: "0") || first == UInt8(ascii: "1") else { return nil }
        var value = Int(first - 0x30) * 1000
        guard bytes.count > 1 else { return value }
        guard bytes[1] == UInt8(ascii: "."), bytes.count <= 5 else { return nil }
        var scale = 100
        for byte in bytes.dropFirst(2) {
            guard SIPGrammar.isDigit(byte) else { return nil }
            value += Int(byte - 0x30) * scale
            scale /= 10
        }
        return value <= 1000 ? value : nil
    }

    /// `"Display" <uri>;params`, or `<uri>;params` without a display name.
    public var description: String {
        var out = ""
        if let displayName, let quoted = SIPGrammar.quoted(displayName) { out = quoted + " " }
        return out + "<" + uri.description + ">" + parameters.serialized
    }

    /// Parses one `(name-addr / addr-spec) *(SEMI generic-param)`; Route and Record-Route
    /// allow only the bracketed form (`requireAngleBrackets`).
    static func parse(_ bytes: ArraySlice<UInt8>, requireAngleBrackets: Bool) throws(SIPError) -> SIPNameAddress {
        var scanner = SIPValueScanner(bytes: bytes)
        scanner.skipWhitespace()
        var displayName: String?
        var bracketed = false
        if scanner.peek == UInt8(ascii: "\"") {
            displayName = try scanner.quotedString()
            scanner.skipWhitespace()
            guard scanner.consume(UInt8(ascii: "<")) else {
                throw SIPError(.malformedHeader, "a quoted display name must be followed by <URI>")
            }
            bracketed = true
        } else if scanner.consume(UInt8(ascii: "<")) {
            bracketed = true
        } else {
            // `*(token LWS) "<"`: tokens up to a "<" make a display name; anything else
            // (the ":" of "sip:") means there is none and this is a bare URI.
            let start = scanner.index
            var end = start
            while scanner.token() != nil {
                end = scanner.index
                scanner.skipWhitespace()
                if scanner.peek == UInt8(ascii: "<") { break }
            }
            if end > start, scanner.consume(UInt8(ascii: "<")) {
                displayName = String(decoding: scanner.bytes[start..<end], as: UTF8.self)
                bracketed = true
            } else {
                scanner.index = start
            }
        }
        let uri: SIPURI
        if bracketed {
            let uriBytes = scanner.run { $0 == UInt8(ascii: ">") }
            guard scanner.consume(UInt8(ascii: ">")) else { throw SIPError(.malformedHeader, "missing \">\" after the URI") }
            uri = try SIPURI.parse(uriBytes)
        } else {
            guard !requireAngleBrackets else { throw SIPError(.malformedHeader, "the URI must be in angle brackets") }
            let uriBytes = scanner.run { SIPGrammar.isWhitespace($0) || $0 == UInt8(ascii: ";") || $0 == UInt8(ascii: ",") }
            guard !uriBytes.isEmpty else { throw SIPError(.malformedHeader, "no address") }
            uri = try SIPURI.parse(uriBytes)
            guard uri.headers.isEmpty else {
                throw SIPError(.malformedHeader, "a URI with headers must be written in angle brackets")
            }
        }
        let parameters = try scanner.parameters()
        try scanner.expectEnd("the address")
        return SIPNameAddress(checkedDisplayName: displayName, uri: uri, parameters: parameters)
    }

    private init(checkedDisplayName: String?, uri: SIPURI, parameters: [SIPParameter]) {
        self.displayName = checkedDisplayName
        self.uri = uri
        self.parameters = parameters
    }

    /// Parses a comma-separated list (Route, Record-Route, P-Asserted-Identity...).
    static func parseList(_ elements: [Substring], requireAngleBrackets: Bool) throws(SIPError) -> [SIPNameAddress] {
        var addresses: [SIPNameAddress] = []
        for element in elements {
            guard !element.isEmpty else { throw SIPError(.malformedHeader, "empty list element") }
            addresses.append(try parse(Array(element.utf8)[...], requireAngleBrackets: requireAngleBrackets))
        }
        return addresses
    }
}
