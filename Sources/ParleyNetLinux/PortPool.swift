import Synchronization
public import ParleyNetCore

/// A thread-safe port range for one-port-per-leg media: ``openSocket(options:)`` binds a
/// UDP socket on the next free port of the range, and closing the socket returns the port.
/// Ports another process holds (`EADDRINUSE`) are skipped.
public final class PortPool: Sendable {
    /// The host part of every socket's address (e.g. `0.0.0.0` or a specific interface).
    public let host: SocketAddress
    private let allocator: Mutex<PortRangeAllocator>

    /// - Parameters:
    ///   - host: the address to bind; its port is ignored.
    ///   - range: the ports to hand out, e.g. 40000...49999.
    public init(host: SocketAddress, range: ClosedRange<UInt16>) throws(NetError) {
        self.host = host
        allocator = Mutex(try PortRangeAllocator(range: range))
    }

    /// Ports currently held by open sockets.
    public var allocatedCount: Int { allocator.withLock { $0.allocatedCount } }
    /// Ports still free.
    public var availableCount: Int { allocator.withLock { $0.availableCount } }

    /// Binds a socket on a free port of the range.
    /// - Throws: ``NetError`` (`isPortsExhausted`) when every port is taken, or the bind error.
    public func openSocket(options: UDPSocket.Options = UDPSocket.Options()) throws(NetError) -> UDPSocket {
        let attempts = allocator.withLock { $0.range.count }
        var busy: [UInt16] = []
        defer { allocator.withLock { state in for port in busy { state.release(port) } } }
        for _ in 0..<attempts {
            let port = try allocator.withLock { (state) throws(NetError) -> UInt16 in try state.allocate() }
            do {
                return try UDPSocket(bindingTo: host.withPort(port), options: options) { [weak self] address in
                    self?.release(address.port)
                }
            } catch where error.isAddressInUse {
                // Held outside this pool: keep it allocated until the loop ends so the
                // next allocation moves on, then give it back.
                busy.append(port)
            } catch {
                allocator.withLock { _ = $0.release(port) }
                throw error
            }
        }
        throw .portsExhausted(allocator.withLock { $0.range })
    }

    private func release(_ port: UInt16) {
        allocator.withLock { _ = $0.release(port) }
    }
}
