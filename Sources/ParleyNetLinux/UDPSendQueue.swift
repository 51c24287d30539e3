public import ParleyNetCore
import Glibc
import CLinux

/// A queue of outgoing datagrams for one `sendmmsg` call: `capacity` preallocated slots of
/// `slotSize` bytes with their destinations. Enqueueing copies the bytes into a slot (no
/// allocation); ``UDPSocket/flush(_:)`` sends the queued datagrams and keeps whatever the
/// kernel would not take yet. Not thread-safe: use it from its event loop.
public final class UDPSendQueue {
    /// Maximum queued datagrams.
    public let capacity: Int
    /// Largest datagram a slot holds.
    public let slotSize: Int
    /// Index of the first datagram not yet sent.
    var head = 0
    /// One past the last queued datagram.
    var tail = 0

    private let slots: MessageSlots
    var headers: UnsafeMutablePointer<parley_mmsghdr> { slots.headers }
    private var slab: UnsafeMutableRawPointer { slots.slab }
    private var iovecs: UnsafeMutablePointer<iovec> { slots.iovecs }
    private var names: UnsafeMutablePointer<sockaddr_storage> { slots.names }

    /// - Parameters:
    ///   - capacity: datagrams per `sendmmsg`, 1...1024.
    ///   - slotSize: the largest datagram accepted by ``enqueue(_:to:)``.
    public init(capacity: Int = 64, slotSize: Int = 2048) {
        precondition((1...1024).contains(capacity) && (1...65536).contains(slotSize), "UDPSendQueue size out of range")
        self.capacity = capacity
        self.slotSize = slotSize
        slots = MessageSlots(capacity: capacity, slotSize: slotSize, initialLength: { _ in 0 })
    }

    /// Datagrams queued and not yet sent.
    public var count: Int { tail - head }
    /// True when no datagram is waiting.
    public var isEmpty: Bool { head == tail }
    /// True when ``enqueue(_:to:)`` would return false until the queue is flushed.
    public var isFull: Bool { tail == capacity }

    /// Copies `bytes` into the next slot, addressed to `destination`.
    /// - Returns: false when the queue is full (flush first).
    /// - Throws: ``NetError`` (`isMessageTooLarge`) when `bytes` exceeds ``slotSize``.
    @discardableResult
    public func enqueue(_ bytes: UnsafeRawBufferPointer, to destination: SocketAddress) throws(NetError) -> Bool {
        guard bytes.count <= slotSize else { throw .datagramTooLarge(size: bytes.count, limit: slotSize) }
        guard tail < capacity else { return false }
        let slot = slab + tail * slotSize
        if let base = bytes.baseAddress { slot.copyMemory(from: base, byteCount: bytes.count) }
        iovecs[tail].iov_len = bytes.count
        headers[tail].msg_hdr.msg_namelen = destination.write(to: UnsafeMutableRawPointer(names + tail))
        tail += 1
        return true
    }

    /// Copies `bytes` into the next slot, addressed to `destination`; false when full.
    @discardableResult
    public func enqueue(_ bytes: [UInt8], to destination: SocketAddress) throws(NetError) -> Bool {
        try bytes.withUnsafeBytes { raw in Result { () throws(NetError) in try enqueue(raw, to: destination) } }.get()
    }

    /// Drops every queued datagram.
    public func removeAll() {
        head = 0
        tail = 0
    }

    /// Marks `n` datagrams from the head as done; rewinds when the queue drains.
    func advance(by n: Int) {
        head += n
        if head >= tail { removeAll() }
    }
}

/// What one ``UDPSocket/flush(_:)`` did.
public struct UDPFlushResult: Sendable, Hashable {
    /// Datagrams the kernel accepted.
    public var sent = 0
    /// Datagrams dropped because the kernel refused them (e.g. `EMSGSIZE`); see ``lastError``.
    public var dropped = 0
    /// True when the socket buffer was full: the rest stays queued for the next flush.
    public var wouldBlock = false
    /// The error behind the last dropped datagram.
    public var lastError: NetError?

    public init() {}
}
