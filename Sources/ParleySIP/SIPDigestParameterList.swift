/// A header value of the form `scheme name=value, name=value...`: RFC 3261 §25.1's
/// `challenge` (WWW-Authenticate, Proxy-Authenticate) and `credentials` (Authorization,
/// Proxy-Authorization), read into its scheme and its parameters in order.
///
/// The grammar is read strictly where a mistake could change the meaning (quoted strings,
/// separators, control characters, line breaks) and leniently where servers differ
/// harmlessly: any parameter may be a token or a quoted string (`algorithm="MD5"`,
/// `qop=auth` in a challenge), names are case-insensitive, whitespace may surround `=`
/// and `,` (RFC 3261's EQUAL and COMMA), and a folded line (CRLF then a space or tab)
/// counts as whitespace.
struct SIPDigestParameterList {
    struct Parameter {
        /// The name in lower case.
        let name: String
        /// The value with a quoted string's quotes and escapes removed.
        let value: String
        /// Byte offset of the name in the header value, for errors.
        let offset: Int
    }

    /// The scheme as written (`Digest`), compare it case-insensitively.
    let scheme: String
    let parameters: [Parameter]

    /// Reads `text`; throws `unsupportedScheme` (with no further parsing) when the scheme
    /// is not Digest, so callers can skip such values.
    init(parsing text: String) throws(SIPDigestError) {
        var reader = Reader(bytes: Array(text.utf8))
        guard reader.bytes.count <= SIPDigestLimits.maxHeaderValueBytes else {
            throw SIPDigestError(.inputTooLarge, "header value is \(reader.bytes.count) bytes, more than the \(SIPDigestLimits.maxHeaderValueBytes) read")
        }
        try reader.skipWhitespace()
        let schemeStart = reader.index
        let scheme = reader.token()
        guard !scheme.isEmpty else {
            throw SIPDigestError(.malformed, offset: schemeStart, reader.atEnd ? "empty header value" : "expected an authentication scheme")
        }
        guard scheme.lowercased() == "digest" else {
            throw SIPDigestError(.unsupportedScheme, offset: schemeStart, "scheme \"\(SIPDigestError.printable(scheme))\" is not Digest")
        }
        let afterScheme = reader.index
        try reader.skipWhitespace()
        var parameters: [Parameter] = []
        if !reader.atEnd {
            guard reader.index > afterScheme else {
                throw SIPDigestError(.malformed, offset: afterScheme, "expected whitespace after the scheme")
            }
            while true {
                guard parameters.count < SIPDigestLimits.maxParameters else {
                    throw SIPDigestError(.inputTooLarge, offset: reader.index, "more than \(SIPDigestLimits.maxParameters) parameters")
                }
                parameters.append(try reader.parameter())
                try reader.skipWhitespace()
                if reader.atEnd { break }
                guard reader.consume(UInt8(ascii: ",")) else {
                    throw SIPDigestError(.malformed, offset: reader.index, "expected \",\" after parameter \"\(parameters[parameters.count - 1].name)\"")
                }
                try reader.skipWhitespace()
                guard !reader.atEnd else {
                    throw SIPDigestError(.malformed, offset: reader.index, "a parameter must follow \",\"")
                }
            }
        }
        self.scheme = scheme
        self.parameters = parameters
    }

    /// The parameter `name` (lower case), nil if absent; throws `duplicateParameter` if it
    /// appears more than once, since which one counts would be a guess an attacker could
    /// steer (one reader takes the first, another the last).
    func parameter(_ name: String) throws(SIPDigestError) -> Parameter? {
        var found: Parameter?
        for parameter in parameters where parameter.name == name {
            if found != nil {
                throw SIPDigestError(.duplicateParameter, offset: parameter.offset, "parameter \"\(name)\" appears twice")
            }
            found = parameter
        }
        return found
    }

    /// The value of a parameter the grammar requires; throws `missingParameter` if absent.
    func required(_ name: String) throws(SIPDigestError) -> String {
        guard let parameter = try parameter(name) else {
            throw SIPDigestError(.missingParameter, "no \"\(name)\" parameter")
        }
        return parameter.value
    }

    /// RFC 3261 §25.1 `token` characters: alphanumerics and `-.!%*_+`'~`.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "!"), UInt8(ascii: "%"), UInt8(ascii: "*"),
             UInt8(ascii: "_"), UInt8(ascii: "+"), UInt8(ascii: "`"), UInt8(ascii: "'"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index >= bytes.count }

        mutating func consume(_ byte: UInt8) -> Bool {
            guard !atEnd, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// Skips spaces, tabs and folded line breaks (CRLF followed by a space or tab). A
        /// line break that does not fold would end the header, so it is an error here:
        /// the message parser hands over one unfolded or folded value, never two.
        mutating func skipWhitespace() throws(SIPDigestError) {
            while !atEnd {
                switch bytes[index] {
                case UInt8(ascii: " "), UInt8(ascii: "\t"):
                    index += 1
                case UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                    guard isFold(at: index) else {
                        throw SIPDigestError(.malformed, offset: index, "line break that is not a folded continuation")
                    }
                    index += 2
                default:
                    return
                }
            }
        }

        func isFold(at position: Int) -> Bool {
            position + 2 < bytes.count && bytes[position] == UInt8(ascii: "\r") && bytes[position + 1] == UInt8(ascii: "\n")
                && (bytes[position + 2] == UInt8(ascii: " ") || bytes[position + 2] == UInt8(ascii: "\t"))
        }

        mutating func token() -> String {
            let start = index
            while !atEnd, SIPDigestParameterList.isTokenByte(bytes[index]) { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        mutating func parameter() throws(SIPDigestError) -> Parameter {
            let nameStart = index
            let name = token().lowercased()
            guard !name.isEmpty else {
                throw SIPDigestError(.malformed, offset: nameStart, "expected a parameter name")
            }
            try skipWhitespace()
            guard consume(UInt8(ascii: "=")) else {
                throw SIPDigestError(.malformed, offset: index, "expected \"=\" after parameter name \"\(SIPDigestError.printable(name))\"")
            }
            try skipWhitespace()
            let valueStart = index
            let value: String
            if consume(UInt8(ascii: "\"")) {
                value = try quotedString(name: name, start: valueStart)
            } else {
                value = token()
                guard !value.isEmpty else {
                    throw SIPDigestError(.malformed, offset: valueStart, "parameter \"\(name)\" has no value (a token or a quoted string)")
                }
            }
            return Parameter(name: name, value: value, offset: nameStart)
        }

        /// The rest of a quoted string whose opening quote was consumed (RFC 3261 §25.1:
        /// qdtext and quoted-pair). Escapes are removed; a quoted-pair may not carry a
        /// line break or a non-ASCII byte, and raw control characters are refused.
        mutating func quotedString(name: String, start: Int) throws(SIPDigestError) -> String {
            var value: [UInt8] = []
            while true {
                guard !atEnd else {
                    throw SIPDigestError(.malformed, offset: start, "unterminated quoted string in parameter \"\(name)\"")
                }
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return String(decoding: value, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard index + 1 < bytes.count else {
                        throw SIPDigestError(.malformed, offset: index, "escape at the end of parameter \"\(name)\"")
                    }
                    let escaped = bytes[index + 1]
                    guard escaped <= 0x7F, escaped != UInt8(ascii: "\r"), escaped != UInt8(ascii: "\n") else {
                        throw SIPDigestError(.malformed, offset: index, "invalid escaped character in parameter \"\(name)\"")
                    }
                    value.append(escaped)
                    index += 2
                case UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                    guard isFold(at: index) else {
                        throw SIPDigestError(.malformed, offset: index, "line break inside parameter \"\(name)\"")
                    }
                    index += 2
                case UInt8(ascii: "\t"):
                    value.append(byte)
                    index += 1
                case 0x00..<0x20, 0x7F:
                    throw SIPDigestError(.malformed, offset: index, "control character inside parameter \"\(name)\"")
                default:
                    value.append(byte)
                    index += 1
                }
            }
        }
    }
}
