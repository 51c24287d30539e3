import Synchronization

/// Which ports of a range are taken: pure bookkeeping, no sockets.
///
/// Allocation walks the range from just after the last port handed out, so a released port
/// is reused as late as possible: stray packets of a finished call then find nobody.
public struct PortRangeAllocator: Sendable, Hashable {
    /// The ports this allocator hands out.
    public let range: ClosedRange<UInt16>
    private var inUse: Set<UInt16> = []
    private var cursor: UInt16

    /// - Throws: ``NetError`` when the range includes port 0.
    public init(range: ClosedRange<UInt16>) throws(NetError) {
        guard range.lowerBound > 0 else { throw .invalidPortRange(range.lowerBound, range.upperBound) }
        self.range = range
        cursor = range.lowerBound
    }

    /// Ports currently handed out.
    public var allocatedCount: Int { inUse.count }
    /// Ports still free.
    public var availableCount: Int { range.count - inUse.count }

    /// Takes the next free port; throws ``NetError`` (`isPortsExhausted`) when none is left.
    public mutating func allocate() throws(NetError) -> UInt16 {
        guard inUse.count < range.count else { throw .portsExhausted(range) }
        // At most range.count steps: there is a free port.
        for _ in 0..<range.count {
            let port = cursor
            cursor = cursor == range.upperBound ? range.lowerBound : cursor + 1
            if inUse.insert(port).inserted { return port }
        }
        throw .portsExhausted(range)
    }

    /// Returns `port`; false when it was not allocated (or is outside the range).
    @discardableResult
    public mutating func release(_ port: UInt16) -> Bool {
        inUse.remove(port) != nil
    }

    /// True when `port` is handed out.
    public func isAllocated(_ port: UInt16) -> Bool { inUse.contains(port) }
}

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
