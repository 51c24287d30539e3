// inet_pton and inet_ntop, which both C libraries have.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address with a UDP port, as a plain value: no allocation, so it can be
/// produced for every received datagram and used as a dictionary key for demultiplexing.
///
/// Text forms: `1.2.3.4:5000` and `[2001:db8::1]:5000` (RFC 5952 form when printed).
/// IPv6 zone identifiers (`%eth0`) are not supported.
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// The address family.
    public enum Family: Hashable, Sendable { case ipv4, ipv6 }

    // IPv4 in host order in `high` (low 32 bits), or IPv6 as two big-endian halves.
    // Package-visible for the sockaddr conversion in ParleyNetLinux.
    package let high: UInt64
    package let low: UInt64
    /// The address family.
    public let family: Family
    /// The UDP port, host order.
    public let port: UInt16

    /// An IPv4 address from its four octets, most significant first.
    public init(ipv4 a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8, port: UInt16) {
        high = UInt64(a) << 24 | UInt64(b) << 16 | UInt64(c) << 8 | UInt64(d)
        low = 0
        family = .ipv4
        self.port = port
    }

    /// An address from raw host bytes: 4 bytes make IPv4, 16 bytes IPv6; nil otherwise.
    public init?(hostBytes bytes: [UInt8], port: UInt16) {
        switch bytes.count {
        case 4:
            self.init(ipv4: bytes[0], bytes[1], bytes[2], bytes[3], port: port)
        case 16:
            var h: UInt64 = 0, l: UInt64 = 0
            for i in 0..<8 { h = h << 8 | UInt64(bytes[i]) }
            for i in 8..<16 { l = l << 8 | UInt64(bytes[i]) }
            self.init(high: h, low: l, family: .ipv6, port: port)
        default:
            return nil
        }
    }

    /// `127.0.0.1:port`.
    public static func ipv4Loopback(port: UInt16) -> SocketAddress { SocketAddress(ipv4: 127, 0, 0, 1, port: port) }
    /// `0.0.0.0:port`: every IPv4 interface.
    public static func ipv4Any(port: UInt16) -> SocketAddress { SocketAddress(ipv4: 0, 0, 0, 0, port: port) }
    /// `[::1]:port`.
    public static func ipv6Loopback(port: UInt16) -> SocketAddress {
        SocketAddress(hostBytes: [UInt8](repeating: 0, count: 15) + [1], port: port)!
    }
    /// `[::]:port`: every IPv6 interface.
    public static func ipv6Any(port: UInt16) -> SocketAddress {
        SocketAddress(hostBytes: [UInt8](repeating: 0, count: 16), port: port)!
    }

    /// Parses `1.2.3.4:5` or `[::1]:5`; throws ``NetError`` (`isInvalidAddress`) otherwise.
    public init(parsing text: String) throws(NetError) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .invalidAddress(text) }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw .invalidAddress(text) }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw .invalidAddress(text) }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        // Digits only: UInt16("+5") would accept a sign.
        guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
              let port = UInt16(portText) else { throw .invalidAddress(text) }
        guard let address = SocketAddress(host: String(host), port: port, ipv6: text.hasPrefix("[")) else {
            throw .invalidAddress(text)
        }
        self = address
    }

    /// Parses a bare host (`1.2.3.4` or `::1`, no brackets) with a port; nil if it is not an address.
    public init?(host: String, port: UInt16) {
        self.init(host: host, port: port, ipv6: host.contains(":"))
    }

    private init?(host: String, port: UInt16, ipv6: Bool) {
        if ipv6 {
            var raw = in6_addr()
            guard inet_pton(AF_INET6, host, &raw) == 1 else { return nil }
            let bytes = withUnsafeBytes(of: raw) { Array($0) }
            self.init(hostBytes: bytes, port: port)
        } else {
            var raw = in_addr()
            guard inet_pton(AF_INET, host, &raw) == 1 else { return nil }
            let bytes = withUnsafeBytes(of: raw) { Array($0) }
            self.init(hostBytes: bytes, port: port)
        }
    }

    /// The host part as network-order bytes (4 or 16).
    public var hostBytes: [UInt8] {
        switch family {
        case .ipv4:
            return (0..<4).map { UInt8(truncatingIfNeeded: high >> (24 - 8 * UInt64($0))) }
        case .ipv6:
            return (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64($0))) }
                + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64($0))) }
        }
    }

    /// The same host with another port.
    public func withPort(_ port: UInt16) -> SocketAddress {
        SocketAddress(high: high, low: low, family: family, port: port)
    }

    package init(high: UInt64, low: UInt64, family: Family, port: UInt16) {
        self.high = high
        self.low = low
        self.family = family
        self.port = port
    }

    /// The host alone: `1.2.3.4` or `::1`.
    public var hostDescription: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let ok: Bool
        switch family {
        case .ipv4:
            var raw = in_addr()
            raw.s_addr = UInt32(truncatingIfNeeded: high).bigEndian
            ok = inet_ntop(AF_INET, &raw, &buffer, socklen_t(buffer.count)) != nil
        case .ipv6:
            var raw = in6_addr()
            withUnsafeMutableBytes(of: &raw) {
                $0.storeBytes(of: high.bigEndian, as: UInt64.self)
                $0.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
            }
            ok = inet_ntop(AF_INET6, &raw, &buffer, socklen_t(buffer.count)) != nil
        }
        guard ok else { return "?" }
        let length = buffer.firstIndex(of: 0) ?? buffer.count
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `1.2.3.4:5` or `[::1]:5`.
    public var description: String {
        switch family {
        case .ipv4: return "\(hostDescription):\(port)"
        case .ipv6: return "[\(hostDescription)]:\(port)"
        }
    }
}
