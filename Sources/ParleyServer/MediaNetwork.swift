import ParleyNetCore
import ParleyNetLinux

/// What the media anchor needs of a leg's datagram socket. `UDPSocket` is the running one;
/// a test hands the anchor sockets that carry datagrams in memory, so the anchor runs in
/// virtual time with no socket.
protocol MediaSocket: AnyObject, Sendable {
    /// The address and port the socket is bound to.
    var localAddress: SocketAddress { get }
    /// Fills `batch` with waiting datagrams; 0 when none is waiting.
    func receive(into batch: UDPReceiveBatch) throws(NetError) -> Int
    /// Sends one datagram; false when the socket's buffer is full (dropped).
    @discardableResult
    func send(_ bytes: UnsafeRawBufferPointer, to destination: SocketAddress) throws(NetError) -> Bool
    /// Sends one datagram; false when the socket's buffer is full (dropped).
    @discardableResult
    func send(_ bytes: [UInt8], to destination: SocketAddress) throws(NetError) -> Bool
    /// Closes it (and gives its port back); later calls do nothing.
    func close()
}

/// Where the anchor's legs get their sockets: `PortPool` over the configured port range.
protocol MediaPorts: Sendable {
    /// A socket bound to a free port of the range.
    func openMediaSocket() throws(NetError) -> any MediaSocket
    /// Ports in use now.
    var allocatedCount: Int { get }
}

/// A media loop: a scheduler that also watches sockets. `EventLoop` (epoll) is the running
/// one; a test's loop runs in virtual time.
protocol MediaLoop: Scheduler {
    /// Calls `onReadable` on the loop while the socket has datagrams waiting. On the loop only.
    func watch(_ socket: any MediaSocket, onReadable: @escaping () -> Void) throws(NetError)
    /// Stops watching the socket. On the loop only.
    func unwatch(_ socket: any MediaSocket)
}

extension UDPSocket: MediaSocket {}

extension PortPool: MediaPorts {
    func openMediaSocket() throws(NetError) -> any MediaSocket {
        try openSocket()
    }
}

extension EventLoop: MediaLoop {
    func watch(_ socket: any MediaSocket, onReadable: @escaping () -> Void) throws(NetError) {
        // An event loop watches descriptors: only the sockets `PortPool` opens reach it.
        guard let descriptor = socket as? UDPSocket else {
            preconditionFailure("an EventLoop watches UDPSockets only, not \(type(of: socket))")
        }
        try register(descriptor, closeOnShutdown: true, onReadable: onReadable)
    }

    func unwatch(_ socket: any MediaSocket) {
        guard let descriptor = socket as? UDPSocket else { return }
        deregister(descriptor)
    }
}
