public import ParleyNetCore
import Glibc
import CLinux

extension TCPSocket {
    /// Starts connecting to `address` and returns at once, with the handshake still under
    /// way: for a connection opened from an ``EventLoop``, which must not wait in
    /// ``connect(to:timeout:)``.
    ///
    /// Hand the socket to a ``TCPConnection`` straight away: writes queue until the
    /// handshake completes (the kernel answers them `EAGAIN` until then, and the
    /// connection's writable interest flushes them), and a refused or failed handshake
    /// reaches the connection's `onClose` as the read error (`ECONNREFUSED`,
    /// `EHOSTUNREACH`...). The kernel retries an unanswered handshake for minutes: the
    /// caller bounds it with its own timer and ``isConnected``.
    public static func startConnecting(to address: SocketAddress) throws(NetError) -> TCPSocket {
        let domain = address.family == .ipv4 ? AF_INET : AF_INET6
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(domain, type, Int32(IPPROTO_TCP))
        guard fd >= 0 else { throw .lastSystemError("socket") }
        if DescriptorHeadroom.encroaches(on: fd) {
            Glibc.close(fd)
            throw DescriptorHeadroom.refusal("socket")
        }
        let result = address.withStorage { pointer, length in Glibc.connect(fd, pointer, length) }
        if result != 0 {
            let error = Glibc.errno
            guard error == EINPROGRESS || error == EINTR else {
                Glibc.close(fd)
                throw .system("connect \(address)", errno: error)
            }
        }
        return TCPSocket(adopting: fd, remote: address)
    }

    /// Whether the handshake has completed: the socket has a peer (`getpeername`
    /// succeeds). False while a ``startConnecting(to:)`` is still under way or after it
    /// failed.
    public var isConnected: Bool {
        TCPSocket.address(of: fileDescriptor, peer: true) != nil
    }
}
