/// Reads one header value (already unfolded: its only whitespace is SP and HTAB) piece by
/// piece: tokens, quoted strings, separators with the optional whitespace RFC 3261 §25.1
/// allows around them (`SEMI = SWS ";" SWS`...), and generic parameters.
struct SIPValueScanner {
    let bytes: [UInt8]
    var index: Int = 0

    init(_ text: some StringProtocol) {
        bytes = Array(text.utf8)
    }

    init(bytes: ArraySlice<UInt8>) {
        self.bytes = Array(bytes)
    }

    var isAtEnd: Bool { index >= bytes.count }
    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }
    var rest: ArraySlice<UInt8> { bytes[min(index, bytes.count)...] }

    mutating func skipWhitespace() {
        while index < bytes.count, SIPGrammar.isWhitespace(bytes[index]) { index += 1 }
    }

    /// Whether only whitespace is left.
    mutating func atEndAfterWhitespace() -> Bool {
        skipWhitespace()
        return isAtEnd
    }

    /// Consumes `byte` if it is next (no whitespace skipped).
    mutating func consume(_ byte: UInt8) -> Bool {
        guard peek == byte else { return false }
        index += 1
        return true
    }

    /// `SWS byte SWS`: consumes the separator with whitespace around it, or nothing.
    mutating func separator(_ byte: UInt8) -> Bool {
        let start = index
        skipWhitespace()
        guard consume(byte) else { index = start; return false }
        skipWhitespace()
        return true
    }

    /// One or more token characters.
    mutating func token() -> ArraySlice<UInt8>? {
        let start = index
        while index < bytes.count, SIPGrammar.isTokenByte(bytes[index]) { index += 1 }
        return index > start ? bytes[start..<index] : nil
    }

    mutating func tokenString() -> String? {
        token().map { String(decoding: $0, as: UTF8.self) }
    }

    /// Bytes up to (not including) the first that `stop` accepts, or the end.
    mutating func run(until stop: (UInt8) -> Bool) -> ArraySlice<UInt8> {
        let start = index
        while index < bytes.count, !stop(bytes[index]) { index += 1 }
        return bytes[start..<index]
    }

    /// A quoted-string at the current position, decoded: quotes dropped, quoted-pairs
    /// resolved. Throws on a missing closing quote.
    mutating func quotedString() throws(SIPError) -> String {
        guard consume(UInt8(ascii: "\"")) else { throw SIPError(.malformedHeader, "expected a quoted string") }
        var out: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\"") { return String(decoding: out, as: UTF8.self) }
            if byte == UInt8(ascii: "\\") {
                guard index < bytes.count else { break }
                out.append(bytes[index])
                index += 1
            } else {
                out.append(byte)
            }
        }
        throw SIPError(.malformedHeader, "unterminated quoted string")
    }

    /// `*( SEMI generic-param )`: stops at the end or at anything that is not `;`.
    mutating func parameters() throws(SIPError) -> [SIPParameter] {
        var parameters: [SIPParameter] = []
        while separator(UInt8(ascii: ";")) {
            guard let name = tokenString() else {
                throw SIPError(.malformedHeader, "empty or malformed parameter name")
            }
            guard separator(UInt8(ascii: "=")) else {
                parameters.append(SIPParameter(checkedName: name, value: nil, quoted: false))
                continue
            }
            if peek == UInt8(ascii: "\"") {
                parameters.append(SIPParameter(checkedName: name, value: try quotedString(), quoted: true))
            } else if peek == UInt8(ascii: "[") {
                let start = index
                let end = bytes[start...].firstIndex(of: UInt8(ascii: "]")).map { $0 + 1 } ?? bytes.count
                index = end
                _ = try SIPHost.parse(bytes[start..<end], bracketsRequired: true)
                parameters.append(SIPParameter(checkedName: name, value: String(decoding: bytes[start..<end], as: UTF8.self), quoted: false))
            } else if let value = token() {
                // A bare IPv6 address (Via `received`, RFC 3261 §20.42) runs on past colons.
                guard peek == UInt8(ascii: ":") else {
                    parameters.append(SIPParameter(checkedName: name, value: String(decoding: value, as: UTF8.self), quoted: false))
                    continue
                }
                let start = value.startIndex
                _ = run { !(SIPGrammar.isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".")) }
                let address = bytes[start..<index]
                guard SIPHost.ipv6Bytes(address) != nil else {
                    throw SIPError(.malformedHeader, "parameter \(SIPGrammar.quote(name)) has a malformed value")
                }
                parameters.append(SIPParameter(checkedName: name, value: String(decoding: address, as: UTF8.self), quoted: false))
            } else if peek == UInt8(ascii: ":") {
                // An IPv6 address starting with "::".
                let start = index
                _ = run { !(SIPGrammar.isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".")) }
                let address = bytes[start..<index]
                guard SIPHost.ipv6Bytes(address) != nil else {
                    throw SIPError(.malformedHeader, "parameter \(SIPGrammar.quote(name)) has a malformed value")
                }
                parameters.append(SIPParameter(checkedName: name, value: String(decoding: address, as: UTF8.self), quoted: false))
            } else {
                throw SIPError(.malformedHeader, "parameter \(SIPGrammar.quote(name)) has an empty or malformed value")
            }
        }
        return parameters
    }

    /// Throws unless only whitespace is left.
    mutating func expectEnd(_ what: String) throws(SIPError) {
        guard atEndAfterWhitespace() else {
            throw SIPError(.malformedHeader, "unexpected \(SIPGrammar.quote(rest)) after \(what)")
        }
    }
}
