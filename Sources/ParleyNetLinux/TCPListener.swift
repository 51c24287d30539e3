public import ParleyNetCore
import Glibc
import CLinux
import Synchronization

/// A non-blocking listening TCP socket. With `reusePort`, several listeners (one per
/// ``EventLoop``) bind the same port and the kernel spreads new connections across them
/// (`SO_REUSEPORT`), so accepting scales with the loops and needs no hand-off.
///
/// IPv6 listeners set `IPV6_V6ONLY`, as ``UDPSocket`` does: listen on both families with
/// two listeners.
public final class TCPListener: EventLoopDescriptor {
    /// The file descriptor.
    public let fileDescriptor: Int32
    /// The bound address, with the kernel's port when bound to port 0.
    public let localAddress: SocketAddress
    private let isOpen = Atomic<Bool>(true)

    /// Binds `address` (`SO_REUSEADDR` always, `SO_REUSEPORT` if asked) and listens.
    public init(bindingTo address: SocketAddress, reusePort: Bool = false, backlog: Int32 = 1024) throws(NetError) {
        let domain = address.family == .ipv4 ? AF_INET : AF_INET6
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(domain, type, Int32(IPPROTO_TCP))
        guard fd >= 0 else { throw .lastSystemError("socket") }
        do throws(NetError) {
            var one: Int32 = 1
            let size = socklen_t(MemoryLayout<Int32>.size)
            if address.family == .ipv6 {
                guard setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, size) == 0 else {
                    throw NetError.lastSystemError("setsockopt(IPV6_V6ONLY)")
                }
            }
            guard setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, size) == 0 else {
                throw NetError.lastSystemError("setsockopt(SO_REUSEADDR)")
            }
            if reusePort {
                guard setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, size) == 0 else {
                    throw NetError.lastSystemError("setsockopt(SO_REUSEPORT)")
                }
            }
            let bound = address.withStorage { pointer, length in Glibc.bind(fd, pointer, length) }
            guard bound == 0 else { throw NetError.lastSystemError("bind \(address)") }
            guard listen(fd, backlog) == 0 else { throw NetError.lastSystemError("listen") }
        } catch {
            Glibc.close(fd)
            throw error
        }
        fileDescriptor = fd
        localAddress = TCPSocket.address(of: fd, peer: false) ?? address
    }

    deinit { close() }

    /// Closes the listening descriptor (once); established connections are unaffected.
    public func close() {
        guard isOpen.exchange(false, ordering: .acquiringAndReleasing) else { return }
        Glibc.close(fileDescriptor)
    }

    /// Accepts one pending connection, non-blocking.
    /// - Returns: nil when none is waiting (or one was aborted before it was accepted).
    /// - Throws: ``NetError``, e.g. `EMFILE` when the process is out of descriptors.
    public func accept() throws(NetError) -> TCPSocket? {
        var storage = sockaddr_storage()
        for _ in 0..<4 {
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    parley_accept4(fileDescriptor, $0, &length, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
                }
            }
            if fd >= 0 {
                let remote = withUnsafePointer(to: storage) { SocketAddress(UnsafeRawPointer($0)) }
                return TCPSocket(adopting: fd, remote: remote)
            }
            let error = Glibc.errno
            switch error {
            case EAGAIN, EWOULDBLOCK: return nil
            case EINTR, ECONNABORTED, EPROTO: continue
            default: throw .system("accept4", errno: error)
            }
        }
        return nil
    }
}
