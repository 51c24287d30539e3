public import ParleyNetCore
import Glibc
import CLinux
import Synchronization

/// A bound, non-blocking UDP socket (`SOCK_NONBLOCK | SOCK_CLOEXEC`), one address family.
///
/// IPv6 sockets are opened with `IPV6_V6ONLY` set: each socket carries one family, so a
/// remote address is never seen both as `1.2.3.4` and as `::ffff:1.2.3.4` (the demultiplexer
/// keys legs by remote address). Listen on both families with two sockets.
///
/// Receive and send are batched (`recvmmsg`/`sendmmsg`) through a ``UDPReceiveBatch`` and a
/// ``UDPSendQueue``, with `recvfrom`/`sendto` single-datagram calls beside them. None of the
/// calls block: "would block" is a return value, not an error.
///
/// The socket itself only holds its descriptor and counters, so it is `Sendable`; the
/// buffers live in the batch and queue, which belong to one thread. ``close()`` may race with
/// a call on another thread (the call then fails with `EBADF`): close from the socket's loop.
public final class UDPSocket: Sendable {
    /// Socket options applied before `bind`.
    public struct Options: Sendable, Hashable {
        /// `SO_REUSEPORT`: several sockets (one per loop) share a port; the kernel spreads
        /// datagrams across them by 4-tuple hash.
        public var reusePort: Bool
        /// Requested `SO_RCVBUF` in bytes (best effort: capped by `net.core.rmem_max`).
        public var receiveBufferSize: Int?
        /// Requested `SO_SNDBUF` in bytes (best effort: capped by `net.core.wmem_max`).
        public var sendBufferSize: Int?

        public init(reusePort: Bool = false, receiveBufferSize: Int? = nil, sendBufferSize: Int? = nil) {
            self.reusePort = reusePort
            self.receiveBufferSize = receiveBufferSize
            self.sendBufferSize = sendBufferSize
        }
    }

    /// The file descriptor (for registration with an ``EventLoop``).
    public let fileDescriptor: Int32
    /// The bound address, with the kernel-chosen port when bound to port 0.
    public let localAddress: SocketAddress
    /// The actual `SO_RCVBUF` as reported by the kernel (Linux doubles the request).
    public let receiveBufferSize: Int
    /// The actual `SO_SNDBUF` as reported by the kernel.
    public let sendBufferSize: Int

    private let isOpen = Atomic<Bool>(true)
    private let refused = Atomic<Int>(0)
    private let onClose: (@Sendable (SocketAddress) -> Void)?

    /// Opens a UDP socket and binds it to `address` (port 0 picks a free port).
    public convenience init(bindingTo address: SocketAddress, options: Options = Options()) throws(NetError) {
        try self.init(bindingTo: address, options: options, onClose: nil)
    }

    init(bindingTo address: SocketAddress, options: Options, onClose: (@Sendable (SocketAddress) -> Void)?) throws(NetError) {
        let domain = address.family == .ipv4 ? AF_INET : AF_INET6
        let type = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(domain, type, Int32(IPPROTO_UDP))
        guard fd >= 0 else { throw .lastSystemError("socket") }
        if DescriptorHeadroom.encroaches(on: fd) {
            Glibc.close(fd)
            throw DescriptorHeadroom.refusal("socket")
        }
        do throws(NetError) {
            if address.family == .ipv6 { try UDPSocket.setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1, "setsockopt(IPV6_V6ONLY)") }
            if options.reusePort { try UDPSocket.setOption(fd, SOL_SOCKET, SO_REUSEPORT, 1, "setsockopt(SO_REUSEPORT)") }
            // Best effort: the kernel caps silently at rmem_max/wmem_max; the actual size is read back.
            if let size = options.receiveBufferSize { try? UDPSocket.setOption(fd, SOL_SOCKET, SO_RCVBUF, Int32(clamping: size), "") }
            if let size = options.sendBufferSize { try? UDPSocket.setOption(fd, SOL_SOCKET, SO_SNDBUF, Int32(clamping: size), "") }
            let bound = address.withStorage { pointer, length in Glibc.bind(fd, pointer, length) }
            guard bound == 0 else { throw NetError.lastSystemError("bind \(address)") }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let named = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            guard named == 0 else { throw NetError.lastSystemError("getsockname") }
            localAddress = withUnsafePointer(to: storage) { SocketAddress(UnsafeRawPointer($0)) } ?? address
            receiveBufferSize = UDPSocket.intOption(fd, SO_RCVBUF)
            sendBufferSize = UDPSocket.intOption(fd, SO_SNDBUF)
        } catch {
            Glibc.close(fd)
            throw error
        }
        fileDescriptor = fd
        self.onClose = onClose
    }

    deinit { close() }

    /// Closes the descriptor (once; later calls do nothing) and returns a pooled port.
    public func close() {
        guard isOpen.exchange(false, ordering: .acquiringAndReleasing) else { return }
        Glibc.close(fileDescriptor)
        onClose?(localAddress)
    }

    /// False after ``close()``.
    public var isClosed: Bool { !isOpen.load(ordering: .acquiring) }

    /// How many `ECONNREFUSED` errors (ICMP port unreachable for an earlier send) were
    /// seen and ignored.
    public var connectionRefusedCount: Int { refused.load(ordering: .relaxed) }

    // MARK: Receive

    /// Receives up to `batch.capacity` datagrams with one `recvmmsg`.
    /// - Returns: the number received (also `batch.count`); 0 when nothing is waiting.
    @discardableResult
    public func receive(into batch: UDPReceiveBatch) throws(NetError) -> Int {
        // ECONNREFUSED reports a past send and clears itself: retry, boundedly.
        for _ in 0..<4 {
            batch.prepare()
            let n = parley_recvmmsg(fileDescriptor, batch.headers, UInt32(batch.capacity), Int32(MSG_DONTWAIT), nil)
            if n >= 0 {
                batch.count = Int(n)
                return Int(n)
            }
            let error = Glibc.errno
            switch error {
            case EAGAIN, EWOULDBLOCK: return 0
            case EINTR: continue
            case ECONNREFUSED: refused.add(1, ordering: .relaxed)
            default: throw .system("recvmmsg", errno: error)
            }
        }
        return 0
    }

    /// Receives one datagram with `recvfrom` into `buffer`.
    /// - Returns: its length (truncated to the buffer) and source, or nil when nothing is waiting.
    public func receive(into buffer: UnsafeMutableRawBufferPointer) throws(NetError) -> (count: Int, source: SocketAddress)? {
        var storage = sockaddr_storage()
        for _ in 0..<4 {
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let n = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(fileDescriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT), $0, &length)
                }
            }
            if n >= 0 {
                let source = withUnsafePointer(to: storage) { SocketAddress(UnsafeRawPointer($0)) } ?? .ipv4Any(port: 0)
                return (n, source)
            }
            let error = Glibc.errno
            switch error {
            case EAGAIN, EWOULDBLOCK: return nil
            case EINTR: continue
            case ECONNREFUSED: refused.add(1, ordering: .relaxed)
            default: throw .system("recvfrom", errno: error)
            }
        }
        return nil
    }

    // MARK: Send

    /// Sends one datagram with `sendto`.
    /// - Returns: false when the socket buffer is full (the datagram was not sent).
    /// - Throws: ``NetError``, e.g. `EMSGSIZE` for a datagram too large to send.
    @discardableResult
    public func send(_ bytes: UnsafeRawBufferPointer, to destination: SocketAddress) throws(NetError) -> Bool {
        for _ in 0..<4 {
            let n = destination.withStorage { pointer, length in
                sendto(fileDescriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), pointer, length)
            }
            if n >= 0 { return true }
            let error = Glibc.errno
            switch error {
            case EAGAIN, EWOULDBLOCK: return false
            case EINTR: continue
            case ECONNREFUSED: refused.add(1, ordering: .relaxed)
            default: throw .system("sendto \(destination)", errno: error)
            }
        }
        return false
    }

    /// Sends one datagram with `sendto`; false when the socket buffer is full.
    @discardableResult
    public func send(_ bytes: [UInt8], to destination: SocketAddress) throws(NetError) -> Bool {
        try bytes.withUnsafeBytes { raw in Result { () throws(NetError) in try send(raw, to: destination) } }.get()
    }

    /// Sends the queued datagrams with as few `sendmmsg` calls as the kernel allows.
    ///
    /// A datagram the kernel rejects (`EMSGSIZE`, `ENETUNREACH`...) is dropped and reported
    /// in the result; the others still go out. When the socket buffer fills, the rest stays
    /// queued and `wouldBlock` is set: flush again when the socket is writable.
    @discardableResult
    public func flush(_ queue: UDPSendQueue) -> UDPFlushResult {
        var result = UDPFlushResult()
        // Each turn either sends, drops one datagram, or stops: at most 2 * capacity turns.
        var turns = 2 * queue.capacity + 4
        while !queue.isEmpty && turns > 0 {
            turns -= 1
            let n = parley_sendmmsg(fileDescriptor, queue.headers + queue.head, UInt32(queue.count), Int32(MSG_DONTWAIT))
            if n > 0 {
                result.sent += Int(n)
                queue.advance(by: Int(n))
                continue
            }
            let error = Glibc.errno
            switch error {
            case EAGAIN, EWOULDBLOCK:
                result.wouldBlock = true
                return result
            case EINTR:
                continue
            case ECONNREFUSED:
                // A stale ICMP error from an earlier send; this datagram was not sent yet.
                refused.add(1, ordering: .relaxed)
            default:
                result.dropped += 1
                result.lastError = .system("sendmmsg", errno: error)
                queue.advance(by: 1)
            }
        }
        return result
    }

    // MARK: Options

    private static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32, _ what: String) throws(NetError) {
        var value = value
        guard setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw .lastSystemError(what)
        }
    }

    private static func intOption(_ fd: Int32, _ name: Int32) -> Int {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, SOL_SOCKET, name, &value, &length) == 0 ? Int(value) : 0
    }
}
