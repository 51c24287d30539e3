public import ParleyNetCore
import Glibc
import CLinux

/// Preallocated buffers for one `recvmmsg` call: `capacity` datagram slots of `slotSize`
/// bytes each, with their source addresses. Receiving allocates nothing; the payloads are
/// views into the slots and stay valid until the next receive into the same batch.
///
/// A batch is not thread-safe. One batch per event loop is enough: the loop receives from
/// one socket at a time and hands each payload on (or copies it) before the next receive.
public final class UDPReceiveBatch {
    /// Number of datagram slots (the `vlen` of `recvmmsg`).
    public let capacity: Int
    /// Bytes per slot: datagrams longer than this are truncated (see ``isTruncated(at:)``).
    public let slotSize: Int
    /// Number of datagrams the last receive filled in.
    public internal(set) var count = 0

    private let slots: MessageSlots
    var headers: UnsafeMutablePointer<parley_mmsghdr> { slots.headers }
    private var slab: UnsafeMutableRawPointer { slots.slab }
    private var iovecs: UnsafeMutablePointer<iovec> { slots.iovecs }
    private var names: UnsafeMutablePointer<sockaddr_storage> { slots.names }

    /// - Parameters:
    ///   - capacity: datagrams per system call, 1...1024 (32-64 is the useful range).
    ///   - slotSize: the largest datagram kept whole; 2048 covers media on a 1500-byte MTU.
    public init(capacity: Int = 64, slotSize: Int = 2048) {
        precondition((1...1024).contains(capacity) && (1...65536).contains(slotSize), "UDPReceiveBatch size out of range")
        self.capacity = capacity
        self.slotSize = slotSize
        slots = MessageSlots(capacity: capacity, slotSize: slotSize, initialLength: { $0 })
    }

    /// Restores the per-call fields the kernel overwrites.
    func prepare() {
        for i in 0..<capacity {
            headers[i].msg_hdr.msg_namelen = socklen_t(MemoryLayout<sockaddr_storage>.size)
            headers[i].msg_hdr.msg_flags = 0
            headers[i].msg_len = 0
        }
        count = 0
    }

    /// Fills the batch as a receive would, from datagrams held in memory (a socket that
    /// carries datagrams in memory, for tests in virtual time): at most ``capacity``, each
    /// cut to ``slotSize`` and marked truncated if longer. Returns how many it took.
    @discardableResult
    public func fill(_ datagrams: some Collection<(bytes: [UInt8], source: SocketAddress)>) -> Int {
        prepare()
        for (index, datagram) in datagrams.prefix(capacity).enumerated() {
            let length = min(datagram.bytes.count, slotSize)
            datagram.bytes.withUnsafeBytes { bytes in
                (slab + index * slotSize).copyMemory(from: bytes.baseAddress!, byteCount: length)
            }
            headers[index].msg_len = UInt32(length)
            if datagram.bytes.count > slotSize { headers[index].msg_hdr.msg_flags = Int32(MSG_TRUNC) }
            headers[index].msg_hdr.msg_namelen = datagram.source.write(to: UnsafeMutableRawPointer(names + index))
            count = index + 1
        }
        return count
    }

    /// The bytes of datagram `index` (< ``count``); valid until the next receive.
    public func payload(at index: Int) -> UnsafeRawBufferPointer {
        precondition(index >= 0 && index < count, "datagram index out of range")
        let length = min(Int(headers[index].msg_len), slotSize)
        return UnsafeRawBufferPointer(start: slab + index * slotSize, count: length)
    }

    /// Where datagram `index` came from.
    public func source(at index: Int) -> SocketAddress {
        precondition(index >= 0 && index < count, "datagram index out of range")
        // UDP sockets only deliver AF_INET/AF_INET6 sources; the fallback never triggers.
        return SocketAddress(UnsafeRawPointer(names + index)) ?? .ipv4Any(port: 0)
    }

    /// True when datagram `index` was longer than ``slotSize`` and was cut.
    public func isTruncated(at index: Int) -> Bool {
        precondition(index >= 0 && index < count, "datagram index out of range")
        return headers[index].msg_hdr.msg_flags & Int32(MSG_TRUNC) != 0
    }

    /// Calls `body` for each datagram of the last receive, in arrival order.
    public func forEach(_ body: (UnsafeRawBufferPointer, SocketAddress) throws -> Void) rethrows {
        for i in 0..<count { try body(payload(at: i), source(at: i)) }
    }
}
