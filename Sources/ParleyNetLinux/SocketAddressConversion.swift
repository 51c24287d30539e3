import Glibc
import ParleyNetCore

// sockaddr conversion: the socket calls' view of a SocketAddress. Kept out of
// ParleyNetCore so the address value stays portable, and internal so no Glibc type
// reaches a public API.
extension SocketAddress {
    /// Reads a `sockaddr_in` or `sockaddr_in6`; nil for other families.
    init?(_ pointer: UnsafeRawPointer) {
        let family = pointer.load(as: sa_family_t.self)
        switch Int32(family) {
        case AF_INET:
            let sin = pointer.loadUnaligned(as: sockaddr_in.self)
            let host = UInt32(bigEndian: sin.sin_addr.s_addr)
            self.init(high: UInt64(host), low: 0, family: .ipv4, port: UInt16(bigEndian: sin.sin_port))
        case AF_INET6:
            let sin6 = pointer.loadUnaligned(as: sockaddr_in6.self)
            let (h, l) = withUnsafeBytes(of: sin6.sin6_addr) {
                (UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)),
                 UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
            }
            self.init(high: h, low: l, family: .ipv6, port: UInt16(bigEndian: sin6.sin6_port))
        default:
            return nil
        }
    }

    /// Writes this address into `storage` (room for a `sockaddr_storage`); returns its length.
    func write(to storage: UnsafeMutableRawPointer) -> socklen_t {
        switch family {
        case .ipv4:
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = port.bigEndian
            sin.sin_addr.s_addr = UInt32(truncatingIfNeeded: high).bigEndian
            storage.storeBytes(of: sin, as: sockaddr_in.self)
            return socklen_t(MemoryLayout<sockaddr_in>.size)
        case .ipv6:
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &sin6.sin6_addr) {
                $0.storeBytes(of: high.bigEndian, as: UInt64.self)
                $0.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
            }
            storage.storeBytes(of: sin6, as: sockaddr_in6.self)
            return socklen_t(MemoryLayout<sockaddr_in6>.size)
        }
    }

    /// Calls `body` with this address as a `sockaddr` and its length.
    func withStorage<R>(_ body: (UnsafeMutablePointer<sockaddr>, socklen_t) -> R) -> R {
        var storage = sockaddr_storage()
        return withUnsafeMutableBytes(of: &storage) { raw in
            let length = write(to: raw.baseAddress!)
            return body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
        }
    }
}
