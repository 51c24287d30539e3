internal import ParleyWireCore

/// An IPv4 or IPv6 address as carried in STUN address attributes.
///
/// Kept as integers so addresses cost no allocation; text form follows RFC 5952
/// (lower case, longest zero run as `::`, IPv4-mapped addresses in dotted form).
public enum STUNIPAddress: Sendable, Hashable, Encodable, CustomStringConvertible {
    /// An IPv4 address, most significant byte first (192.0.2.1 is 0xC0000201).
    case ipv4(UInt32)
    /// An IPv6 address as its high and low 64 bits.
    case ipv6(high: UInt64, low: UInt64)

    /// From 4 (IPv4) or 16 (IPv6) bytes in network order; nil for any other count.
    public init?(bytes: some Collection<UInt8>) {
        switch bytes.count {
        case 4:
            self = .ipv4(bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        case 16:
            var high: UInt64 = 0
            var low: UInt64 = 0
            for (index, byte) in bytes.enumerated() {
                if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
            }
            self = .ipv6(high: high, low: low)
        default:
            return nil
        }
    }

    /// Parses `192.0.2.1` or RFC 4291 §2.2 IPv6 text (`2001:db8::1`, `::ffff:192.0.2.1`).
    /// Returns nil for anything else, including zone suffixes such as `%eth0`.
    public init?(_ text: String) {
        let utf8 = Array(text.utf8)
        if !utf8.contains(UInt8(ascii: ":")) {
            guard let value = Self.parseIPv4(utf8[...]) else { return nil }
            self = .ipv4(value)
            return
        }
        guard let groups = Self.parseIPv6(utf8) else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, group) in groups.enumerated() {
            if index < 4 { high = high << 16 | UInt64(group) } else { low = low << 16 | UInt64(group) }
        }
        self = .ipv6(high: high, low: low)
    }

    /// The address family number used on the wire (RFC 8489 §14.1): 0x01 IPv4, 0x02 IPv6.
    public var family: UInt8 {
        switch self {
        case .ipv4: return 0x01
        case .ipv6: return 0x02
        }
    }

    /// The address bytes in network order (4 or 16 of them).
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        switch self {
        case .ipv4(let value):
            out.appendUInt32(value)
        case .ipv6(let high, let low):
            out.reserveCapacity(16)
            out.appendUInt64(high)
            out.appendUInt64(low)
        }
        return out
    }

    public var description: String {
        switch self {
        case .ipv4(let value):
            return Self.dotted(value)
        case .ipv6(let high, let low):
            var groups: [UInt16] = []
            for shift in stride(from: 48, through: 0, by: -16) { groups.append(UInt16(truncatingIfNeeded: high >> UInt64(shift))) }
            for shift in stride(from: 48, through: 0, by: -16) { groups.append(UInt16(truncatingIfNeeded: low >> UInt64(shift))) }
            // RFC 5952 §5: IPv4-mapped addresses keep the IPv4 part dotted.
            if high == 0, low >> 32 == 0xFFFF {
                return "::ffff:" + Self.dotted(UInt32(truncatingIfNeeded: low))
            }
            return Self.compressed(groups)
        }
    }

    /// Encodes as its text form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    // MARK: Text helpers

    private static func dotted(_ value: UInt32) -> String {
        "\(value >> 24).\(value >> 16 & 0xFF).\(value >> 8 & 0xFF).\(value & 0xFF)"
    }

    /// RFC 5952 §4.2: the longest run of two or more zero groups, the first on a tie, becomes `::`.
    private static func compressed(_ groups: [UInt16]) -> String {
        var bestStart = -1
        var bestLength = 1
        var index = 0
        while index < groups.count {
            if groups[index] == 0 {
                var end = index
                while end < groups.count, groups[end] == 0 { end += 1 }
                if end - index > bestLength { bestStart = index; bestLength = end - index }
                index = end
            } else {
                index += 1
            }
        }
        func text(_ slice: ArraySlice<UInt16>) -> String {
            slice.map { String($0, radix: 16) }.joined(separator: ":")
        }
        guard bestStart >= 0 else { return text(groups[...]) }
        return text(groups[..<bestStart]) + "::" + text(groups[(bestStart + bestLength)...])
    }

    private static func parseIPv4(_ text: ArraySlice<UInt8>) -> UInt32? {
        let parts = text.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
            // A leading zero would be read as octal by some tools; refuse the ambiguity.
            if part.count > 1, part.first == UInt8(ascii: "0") { return nil }
            let number = part.reduce(UInt32(0)) { $0 * 10 + UInt32($1 - UInt8(ascii: "0")) }
            guard number <= 255 else { return nil }
            value = value << 8 | number
        }
        return value
    }

    private static func parseHexGroup(_ text: ArraySlice<UInt8>) -> UInt16? {
        guard (1...4).contains(text.count) else { return nil }
        var value: UInt16 = 0
        for c in text {
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }

    /// Groups of one side of `::`; the last group may be a dotted IPv4 tail (two groups).
    private static func parseGroupList(_ text: ArraySlice<UInt8>, allowIPv4Tail: Bool) -> [UInt16]? {
        if text.isEmpty { return [] }
        let parts = text.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        var groups: [UInt16] = []
        for (index, part) in parts.enumerated() {
            if index == parts.count - 1, allowIPv4Tail, part.contains(UInt8(ascii: ".")) {
                guard let v4 = parseIPv4(part) else { return nil }
                groups.append(UInt16(v4 >> 16))
                groups.append(UInt16(truncatingIfNeeded: v4))
            } else {
                guard let group = parseHexGroup(part) else { return nil }
                groups.append(group)
            }
        }
        return groups
    }

    private static func parseIPv6(_ text: [UInt8]) -> [UInt16]? {
        let colon = UInt8(ascii: ":")
        var doubleColon: Int? = nil
        var index = 0
        while index + 1 < text.count {
            if text[index] == colon, text[index + 1] == colon {
                if doubleColon != nil { return nil }
                doubleColon = index
                index += 2
            } else {
                index += 1
            }
        }
        if let split = doubleColon {
            guard let head = parseGroupList(text[..<split], allowIPv4Tail: false),
                  let tail = parseGroupList(text[(split + 2)...], allowIPv4Tail: true),
                  head.count + tail.count <= 7 else { return nil }
            return head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        }
        guard let groups = parseGroupList(text[...], allowIPv4Tail: true), groups.count == 8 else { return nil }
        return groups
    }
}
