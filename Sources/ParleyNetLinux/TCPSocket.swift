import ParleyWireCore
public import ParleyNetCore
import Glibc
import CLinux
import Synchronization

/// A connected, non-blocking TCP socket (`SOCK_NONBLOCK | SOCK_CLOEXEC`): accepted by a
/// ``TCPListener`` or opened with ``connect(to:timeout:)``.
///
/// Reads and writes never block: "would block" is a return value. Writes use
/// `MSG_NOSIGNAL`, so a peer that went away gives `EPIPE` instead of killing the process.
/// A server hands the socket to a ``TCPConnection`` on one ``EventLoop``; a blocking-style
/// client waits with ``waitUntilReadable(timeout:)`` / ``waitUntilWritable(timeout:)``.
public final class TCPSocket: EventLoopDescriptor {
    /// Outcome of a read.
    public enum ReadResult: Sendable, Hashable {
        /// This many bytes were read into the buffer.
        case bytes(Int)
        /// Nothing is waiting.
        case wouldBlock
        /// The peer closed its sending side (FIN).
        case endOfStream
    }

    /// The file descriptor.
    public let fileDescriptor: Int32
    /// The peer's address.
    public let remoteAddress: SocketAddress
    /// This end's address.
    public let localAddress: SocketAddress
    private let isOpen = Atomic<Bool>(true)

    /// Wraps a connected descriptor (made non-blocking here); takes ownership of it.
    init(adopting fd: Int32, remote: SocketAddress?) {
        fileDescriptor = fd
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 && flags & O_NONBLOCK == 0 { _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
        localAddress = TCPSocket.address(of: fd, peer: false) ?? .ipv4Any(port: 0)
        remoteAddress = remote ?? TCPSocket.address(of: fd, peer: true) ?? .ipv4Any(port: 0)
        // Small messages (signaling frames) must not wait for Nagle's algorithm.
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close() }

    /// Connects to `address`, waiting at most `timeout` for the handshake.
    /// Throws ``NetError`` (e.g. `ECONNREFUSED`, or `isTimedOut`).
    public static func connect(to address: SocketAddress, timeout: Duration = .seconds(10)) throws(NetError) -> TCPSocket {
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
            guard TCPSocket.poll(fd, events: Int16(POLLOUT), timeout: timeout) else {
                Glibc.close(fd)
                throw .timedOut("connect \(address)")
            }
            var soError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length)
            guard soError == 0 else {
                Glibc.close(fd)
                throw .system("connect \(address)", errno: soError)
            }
        }
        return TCPSocket(adopting: fd, remote: address)
    }

    /// Closes the descriptor (once).
    public func close() {
        guard isOpen.exchange(false, ordering: .acquiringAndReleasing) else { return }
        Glibc.close(fileDescriptor)
    }

    /// False after ``close()``.
    public var isClosed: Bool { !isOpen.load(ordering: .acquiring) }

    /// Reads into `buffer`. Throws for `ECONNRESET` and other errors.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(NetError) -> ReadResult {
        for _ in 0..<4 {
            let n = recv(fileDescriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
            if n > 0 { return .bytes(n) }
            if n == 0 { return buffer.isEmpty ? .bytes(0) : .endOfStream }
            let error = Glibc.errno
            switch error {
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case EINTR: continue
            default: throw .system("recv", errno: error)
            }
        }
        return .wouldBlock
    }

    /// Writes as much of `bytes` as the socket takes now.
    /// - Returns: the number written, 0 when the socket buffer is full.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(NetError) -> Int {
        guard !bytes.isEmpty else { return 0 }
        for _ in 0..<4 {
            let n = send(fileDescriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            if n >= 0 { return n }
            let error = Glibc.errno
            switch error {
            case EAGAIN, EWOULDBLOCK: return 0
            case EINTR: continue
            default: throw .system("send", errno: error)
            }
        }
        return 0
    }

    /// Writes as much of `bytes[offset...]` as the socket takes now; returns the count.
    public func write(_ bytes: [UInt8], from offset: Int = 0) throws(NetError) -> Int {
        guard offset >= 0, offset < bytes.count else { return 0 }
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(NetError) in try write(UnsafeRawBufferPointer(rebasing: raw[offset...])) }
        }
        switch result {
        case .success(let count): return count
        case .failure(let error): throw error
        }
    }

    /// Reads into the start of `buffer` (up to its count).
    public func read(into buffer: inout [UInt8]) throws(NetError) -> ReadResult {
        let result = buffer.withUnsafeMutableBytes { raw in
            Result { () throws(NetError) in try read(into: raw) }
        }
        switch result {
        case .success(let value): return value
        case .failure(let error): throw error
        }
    }

    /// Sends FIN: the peer reads end of stream; this end may still read.
    public func shutdownWrite() {
        _ = Glibc.shutdown(fileDescriptor, Int32(SHUT_WR))
    }

    /// Waits until the socket is readable (data, end of stream or error) or `timeout` passes.
    /// - Returns: false on timeout.
    public func waitUntilReadable(timeout: Duration) -> Bool {
        TCPSocket.poll(fileDescriptor, events: Int16(POLLIN), timeout: timeout)
    }

    /// Waits until the socket takes more data or `timeout` passes; false on timeout.
    public func waitUntilWritable(timeout: Duration) -> Bool {
        TCPSocket.poll(fileDescriptor, events: Int16(POLLOUT), timeout: timeout)
    }

    /// Sets `SO_SNDBUF` / `SO_RCVBUF` (best effort; tests shrink them to reach back-pressure fast).
    public func setBufferSizes(send: Int?, receive: Int?) {
        if var value = send.map({ Int32(clamping: $0) }) {
            _ = setsockopt(fileDescriptor, SOL_SOCKET, SO_SNDBUF, &value, socklen_t(MemoryLayout<Int32>.size))
        }
        if var value = receive.map({ Int32(clamping: $0) }) {
            _ = setsockopt(fileDescriptor, SOL_SOCKET, SO_RCVBUF, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    static func poll(_ fd: Int32, events: Int16, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            let milliseconds = max(0, remaining.wholeMilliseconds)
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let n = Glibc.poll(&entry, 1, Int32(clamping: milliseconds))
            if n > 0 { return true }
            if n == 0 { return false }
            if Glibc.errno != EINTR { return true }
        }
    }

    static func address(of fd: Int32, peer: Bool) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { peer ? getpeername(fd, $0, &length) : getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        return withUnsafePointer(to: storage) { SocketAddress(UnsafeRawPointer($0)) }
    }
}
