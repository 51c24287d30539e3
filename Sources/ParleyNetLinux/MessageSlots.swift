import Glibc
import CLinux

/// The preallocated memory behind one `recvmmsg` or `sendmmsg` call: `capacity` slots of
/// `slotSize` bytes, each with its `iovec`, its address storage and the `mmsghdr` that
/// points at both. Shared by ``UDPReceiveBatch`` and ``UDPSendQueue`` so the pointer
/// wiring and its lifetime live in one place.
final class MessageSlots {
    let capacity: Int
    let slotSize: Int
    let slab: UnsafeMutableRawPointer
    let headers: UnsafeMutablePointer<parley_mmsghdr>
    let iovecs: UnsafeMutablePointer<iovec>
    let names: UnsafeMutablePointer<sockaddr_storage>

    /// - Parameter initialLength: each slot's `iov_len` to start with: the whole slot for
    ///   receiving, 0 for a send queue that sets it per datagram.
    init(capacity: Int, slotSize: Int, initialLength: (Int) -> Int) {
        self.capacity = capacity
        self.slotSize = slotSize
        slab = UnsafeMutableRawPointer.allocate(byteCount: capacity * slotSize, alignment: 16)
        headers = .allocate(capacity: capacity)
        iovecs = .allocate(capacity: capacity)
        names = .allocate(capacity: capacity)
        for i in 0..<capacity {
            names[i] = sockaddr_storage()
            iovecs[i] = iovec(iov_base: slab + i * slotSize, iov_len: initialLength(slotSize))
            var header = msghdr()
            header.msg_name = UnsafeMutableRawPointer(names + i)
            header.msg_iov = iovecs + i
            header.msg_iovlen = 1
            headers[i] = parley_mmsghdr(msg_hdr: header, msg_len: 0)
        }
    }

    deinit {
        slab.deallocate()
        headers.deallocate()
        iovecs.deallocate()
        names.deallocate()
    }
}
