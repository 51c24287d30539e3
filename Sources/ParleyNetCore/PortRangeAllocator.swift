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
