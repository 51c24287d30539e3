/// The host of a SIP URI or a Via's sent-by (RFC 3261 §25.1 `host`): a domain name, an
/// IPv4 address, or an IPv6 address, which SIP writes in brackets (an `IPv6reference`,
/// RFC 5118 §4.1) so the port that may follow stays unambiguous.
///
/// Each case keeps the text as written (without the brackets); `isEquivalent(to:)`
/// compares as §19.1.4 does (names case-insensitively, addresses by value).
public enum SIPHost: Sendable, Hashable, CustomStringConvertible {
    /// A domain name (`hostname` of §25.1: labels of letters, digits and inner hyphens,
    /// the last starting with a letter; a final dot is allowed).
    case name(String)
    /// A dotted-quad IPv4 address.
    case ipv4(String)
    /// An IPv6 address (RFC 4291 §2.2 text form), without brackets.
    case ipv6(String)

    /// Parses a host as written in a URI or a Via: an IPv6 address must be in brackets.
    public init(parsing text: some StringProtocol) throws(SIPError) {
        self = try Self.parse(Array(text.utf8)[...], bracketsRequired: true)
    }

    /// Parses `bytes` as a host; with `bracketsRequired` an IPv6 address must be written
    /// `[...]` (URIs, sent-by); without, it must be bare (Via `received`, RFC 3261 §20.42),
    /// though a bracketed one is accepted too (RFC 5118 §4.5 asks receivers to be robust).
    static func parse(_ bytes: ArraySlice<UInt8>, bracketsRequired: Bool) throws(SIPError) -> SIPHost {
        guard !bytes.isEmpty else { throw SIPError(.malformedURI, "empty host") }
        if bytes.first == UInt8(ascii: "[") {
            guard bytes.count >= 2, bytes.last == UInt8(ascii: "]") else {
                throw SIPError(.malformedURI, "unterminated IPv6 reference \(SIPGrammar.quote(bytes))")
            }
            let inner = bytes.dropFirst().dropLast()
            guard ipv6Bytes(inner) != nil else {
                throw SIPError(.malformedURI, "\(SIPGrammar.quote(bytes)) is not an IPv6 address")
            }
            return .ipv6(String(decoding: inner, as: UTF8.self))
        }
        if !bracketsRequired, bytes.contains(UInt8(ascii: ":")) {
            guard ipv6Bytes(bytes) != nil else {
                throw SIPError(.malformedURI, "\(SIPGrammar.quote(bytes)) is not an IPv6 address")
            }
            return .ipv6(String(decoding: bytes, as: UTF8.self))
        }
        if ipv4Bytes(bytes) != nil { return .ipv4(String(decoding: bytes, as: UTF8.self)) }
        guard isHostname(bytes) else {
            throw SIPError(.malformedURI, "\(SIPGrammar.quote(bytes)) is not a host name or IP address")
        }
        return .name(String(decoding: bytes, as: UTF8.self))
    }

    /// The host as written in a URI: IPv6 in brackets.
    public var description: String {
        switch self {
        case .name(let text), .ipv4(let text): text
        case .ipv6(let text): "[" + text + "]"
        }
    }

    /// The address or name without brackets.
    public var text: String {
        switch self {
        case .name(let text), .ipv4(let text), .ipv6(let text): text
        }
    }

    /// The address in network byte order (4 or 16 bytes); nil for a name.
    public var addressBytes: [UInt8]? {
        switch self {
        case .name: nil
        case .ipv4(let text): Self.ipv4Bytes(Array(text.utf8)[...])
        case .ipv6(let text): Self.ipv6Bytes(Array(text.utf8)[...])
        }
    }

    /// RFC 3261 §19.1.4: names compare case-insensitively, addresses by value (so
    /// `[2001:DB8::1]` and `[2001:db8:0::1]` are one host); a name never equals an address.
    public func isEquivalent(to other: SIPHost) -> Bool {
        switch (self, other) {
        case (.name(let a), .name(let b)):
            let trimmedA = a.utf8.last == UInt8(ascii: ".") ? Substring(a.utf8.dropLast()) : Substring(a)
            let trimmedB = b.utf8.last == UInt8(ascii: ".") ? Substring(b.utf8.dropLast()) : Substring(b)
            return SIPGrammar.equalsIgnoringCase(trimmedA, trimmedB)
        case (.ipv4, .ipv4), (.ipv6, .ipv6):
            return addressBytes == other.addressBytes
        default:
            return false
        }
    }

    /// `hostname = *( domainlabel "." ) toplabel [ "." ]`.
    static func isHostname(_ bytes: ArraySlice<UInt8>) -> Bool {
        var labels = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        if labels.count > 1, labels.last?.isEmpty == true { labels.removeLast() }
        guard !labels.isEmpty, bytes.count <= 255 else { return false }
        for (index, label) in labels.enumerated() {
            guard let first = label.first, let last = label.last,
                  SIPGrammar.isAlphanumeric(first), SIPGrammar.isAlphanumeric(last),
                  label.allSatisfy({ SIPGrammar.isAlphanumeric($0) || $0 == UInt8(ascii: "-") }) else { return false }
            if index == labels.count - 1, !SIPGrammar.isAlpha(first) { return false }
        }
        return true
    }

    /// Four decimal octets 0-255 of one to three digits each.
    static func ipv4Bytes(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var out: [UInt8] = []
        for part in parts {
            guard part.count <= 3, let value = SIPGrammar.decimal(part, as: UInt16.self), value <= 255 else { return nil }
            out.append(UInt8(value))
        }
        return out
    }

    /// RFC 4291 §2.2: eight groups of one to four hex digits, one `::` standing for one or
    /// more zero groups, the last two groups optionally written as an IPv4 address. The
    /// three-colon form RFC 3261's ABNF let through (RFC 5118 §4.10) is refused.
    static func ipv6Bytes(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        guard bytes.count >= 2, bytes.count <= 45 else { return nil }
        var head: [UInt16] = []
        var tail: [UInt16] = []
        var sawDoubleColon = false
        var index = bytes.startIndex
        if bytes[index] == UInt8(ascii: ":") {
            guard bytes[bytes.index(after: index)] == UInt8(ascii: ":") else { return nil }
            sawDoubleColon = true
            index = bytes.index(index, offsetBy: 2)
            if index == bytes.endIndex { return [UInt8](repeating: 0, count: 16) }
        }
        while index < bytes.endIndex {
            // One group (or a trailing IPv4 address), then ":" or "::" or the end.
            var end = index
            while end < bytes.endIndex, bytes[end] != UInt8(ascii: ":") { end += 1 }
            let group = bytes[index..<end]
            if end == bytes.endIndex, group.contains(UInt8(ascii: ".")) {
                guard let v4 = ipv4Bytes(group) else { return nil }
                let high = UInt16(v4[0]) << 8 | UInt16(v4[1])
                let low = UInt16(v4[2]) << 8 | UInt16(v4[3])
                if sawDoubleColon { tail += [high, low] } else { head += [high, low] }
                index = end
                break
            }
            guard !group.isEmpty, group.count <= 4, group.allSatisfy(SIPGrammar.isHexDigit) else { return nil }
            var value: UInt16 = 0
            for byte in group { value = value << 4 | UInt16(SIPGrammar.hexValue(byte) ?? 0) }
            if sawDoubleColon { tail.append(value) } else { head.append(value) }
            index = end
            guard index < bytes.endIndex else { break }
            // At a colon: a second one makes "::", allowed once and not followed by a third.
            index += 1
            guard index < bytes.endIndex else { return nil }
            if bytes[index] == UInt8(ascii: ":") {
                guard !sawDoubleColon else { return nil }
                sawDoubleColon = true
                index += 1
                if index == bytes.endIndex { break }
                guard bytes[index] != UInt8(ascii: ":") else { return nil }
            }
        }
        let groups = head.count + tail.count
        if sawDoubleColon {
            guard groups <= 7 else { return nil }
        } else {
            guard groups == 8 else { return nil }
        }
        let all = head + [UInt16](repeating: 0, count: 8 - groups) + tail
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }
    }
}
