/// Character classes and small helpers of the SIP grammar (RFC 3261 §25.1), shared by the
/// message, URI and header parsers. Every function is total: no input makes one trap.
enum SIPGrammar {
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let cr: UInt8 = 0x0d
    static let lf: UInt8 = 0x0a

    static func isWhitespace(_ byte: UInt8) -> Bool { byte == space || byte == tab }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    static func isAlpha(_ byte: UInt8) -> Bool { (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) }

    static func isAlphanumeric(_ byte: UInt8) -> Bool { isAlpha(byte) || isDigit(byte) }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }

    /// `token` characters: alphanum / "-" / "." / "!" / "%" / "*" / "_" / "+" / "`" / "'" / "~".
    static func isTokenByte(_ byte: UInt8) -> Bool {
        if isAlphanumeric(byte) { return true }
        switch byte {
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "!"), UInt8(ascii: "%"), UInt8(ascii: "*"),
             UInt8(ascii: "_"), UInt8(ascii: "+"), UInt8(ascii: "`"), UInt8(ascii: "'"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// `word` characters (Call-ID): token characters and `( ) < > : \ " / [ ] ? { }`.
    static func isWordByte(_ byte: UInt8) -> Bool {
        if isTokenByte(byte) { return true }
        switch byte {
        case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: ":"),
             UInt8(ascii: "\\"), UInt8(ascii: "\""), UInt8(ascii: "/"), UInt8(ascii: "["), UInt8(ascii: "]"),
             UInt8(ascii: "?"), UInt8(ascii: "{"), UInt8(ascii: "}"):
            return true
        default:
            return false
        }
    }

    /// `unreserved` (RFC 3261 §25.1, after RFC 2396): alphanum / mark.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        if isAlphanumeric(byte) { return true }
        switch byte {
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "!"), UInt8(ascii: "~"),
             UInt8(ascii: "*"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"):
            return true
        default:
            return false
        }
    }

    /// `reserved`: ; / ? : @ & = + $ ,
    static func isReserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: ";"), UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: ":"), UInt8(ascii: "@"),
             UInt8(ascii: "&"), UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "$"), UInt8(ascii: ","):
            return true
        default:
            return false
        }
    }

    /// Characters a SIP URI's user part may hold unescaped: unreserved / user-unreserved.
    static func isUserByte(_ byte: UInt8) -> Bool {
        if isUnreserved(byte) { return true }
        switch byte {
        case UInt8(ascii: "&"), UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "$"), UInt8(ascii: ","),
             UInt8(ascii: ";"), UInt8(ascii: "?"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    /// Characters a password may hold unescaped: unreserved / & = + $ ,
    static func isPasswordByte(_ byte: UInt8) -> Bool {
        if isUnreserved(byte) { return true }
        switch byte {
        case UInt8(ascii: "&"), UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "$"), UInt8(ascii: ","):
            return true
        default:
            return false
        }
    }

    /// `paramchar` without the escape: param-unreserved / unreserved.
    static func isParameterByte(_ byte: UInt8) -> Bool {
        if isUnreserved(byte) { return true }
        switch byte {
        case UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "&"),
             UInt8(ascii: "+"), UInt8(ascii: "$"):
            return true
        default:
            return false
        }
    }

    /// URI header name and value characters without the escape: hnv-unreserved / unreserved.
    static func isURIHeaderByte(_ byte: UInt8) -> Bool {
        if isUnreserved(byte) { return true }
        switch byte {
        case UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: ":"),
             UInt8(ascii: "+"), UInt8(ascii: "$"):
            return true
        default:
            return false
        }
    }

    /// `uric`: reserved / unreserved (escapes are checked separately).
    static func isURICByte(_ byte: UInt8) -> Bool { isReserved(byte) || isUnreserved(byte) }

    static func lowercase(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte }

    /// ASCII case-insensitive equality, as header names, tokens and schemes compare.
    static func equalsIgnoringCase(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        a.utf8.count == b.utf8.count && a.utf8.elementsEqual(b.utf8) { lowercase($0) == lowercase($1) }
    }

    static func lowercased(_ text: some StringProtocol) -> String {
        String(decoding: text.utf8.map(lowercase), as: UTF8.self)
    }

    static func isToken(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenByte)
    }

    static func isToken(_ bytes: ArraySlice<UInt8>) -> Bool {
        !bytes.isEmpty && bytes.allSatisfy(isTokenByte)
    }

    /// A decimal number of `T`: digits only (at least one, at most `maxDigits` so leading
    /// zeros stay bounded), no sign, nil on overflow.
    static func decimal<T: FixedWidthInteger & UnsignedInteger>(_ bytes: some Collection<UInt8>, as type: T.Type = T.self, maxDigits: Int = 32) -> T? {
        guard !bytes.isEmpty, bytes.count <= maxDigits else { return nil }
        var value: T = 0
        for byte in bytes {
            guard isDigit(byte) else { return nil }
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = shifted.addingReportingOverflow(T(byte - 0x30))
            if overflow1 || overflow2 { return nil }
            value = sum
        }
        return value
    }

    static func decimal<T: FixedWidthInteger & UnsignedInteger>(_ text: some StringProtocol, as type: T.Type = T.self, maxDigits: Int = 32) -> T? {
        decimal(Array(text.utf8), as: type, maxDigits: maxDigits)
    }

    /// Whether every `%` in `bytes` starts a `%` HEX HEX escape and every other byte
    /// satisfies `allowed`.
    static func isEscapedText(_ bytes: some Collection<UInt8>, allowed: (UInt8) -> Bool) -> Bool {
        var pendingHex = 0
        for byte in bytes {
            if pendingHex > 0 {
                guard isHexDigit(byte) else { return false }
                pendingHex -= 1
            } else if byte == UInt8(ascii: "%") {
                pendingHex = 2
            } else if !allowed(byte) {
                return false
            }
        }
        return pendingHex == 0
    }

    /// `text` with every `%` HEX HEX escape replaced by its byte. Bytes that do not form
    /// UTF-8 come out as U+FFFD (the escaped text was already validated).
    static func unescaped(_ text: some StringProtocol) -> String {
        let bytes = Array(text.utf8)
        guard bytes.contains(UInt8(ascii: "%")) else { return String(text) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` with every byte that `allowed` refuses written as `%` HEX HEX (uppercase).
    static func escaped(_ text: some StringProtocol, allowed: (UInt8) -> Bool) -> String {
        var out: [UInt8] = []
        for byte in text.utf8 {
            if allowed(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0f)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// The comparison form of escaped URI text (RFC 3261 §19.1.4): escapes of characters
    /// outside the reserved set are decoded, the others kept with uppercase hex, so
    /// `%61lice` equals `alice` but `%3B` stays distinct from `;`.
    static func comparisonForm(_ text: some StringProtocol, caseInsensitive: Bool) -> [UInt8] {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                let decoded = high << 4 | low
                if isReserved(decoded) {
                    out.append(UInt8(ascii: "%"))
                    out.append(hexDigits[Int(high)])
                    out.append(hexDigits[Int(low)])
                } else {
                    out.append(caseInsensitive ? lowercase(decoded) : decoded)
                }
                index += 3
            } else {
                out.append(caseInsensitive ? lowercase(byte) : byte)
                index += 1
            }
        }
        return out
    }

    /// Quotes `text` as a SIP quoted-string: `"` and `\` and controls other than HTAB
    /// become quoted-pairs. Nil when `text` holds CR or LF, which no quoted-string can carry.
    static func quoted(_ text: some StringProtocol) -> String? {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for byte in text.utf8 {
            switch byte {
            case cr, lf: return nil
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x00...0x08, 0x0b...0x1f, 0x7f:
                out.append(UInt8(ascii: "\\"))
                out.append(byte)
            default:
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
        return String(decoding: out, as: UTF8.self)
    }

    /// Quotes a piece of input for an error message, shortened so one hostile line cannot
    /// make a huge error, with controls shown as `?`.
    static func quote(_ text: some StringProtocol, limit: Int = 40) -> String {
        var out = "\""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit { out += "..."; break }
            out.unicodeScalars.append(scalar.value < 0x20 || scalar.value == 0x7f ? "?" : scalar)
            count += 1
        }
        return out + "\""
    }

    static func quote(_ bytes: ArraySlice<UInt8>, limit: Int = 40) -> String {
        quote(String(decoding: bytes.prefix(limit * 4), as: UTF8.self), limit: limit)
    }
}
