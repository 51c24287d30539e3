import ParleyNetCore
import ParleyNetLinux
@testable import ParleyServer
import ParleyTestSupport
import Synchronization

/// Datagrams carried in memory between the media anchor's sockets and test devices, so
/// the anchor runs on a `ManualScheduler` with no socket. Delivery is immediate; a
/// datagram to an address nobody holds is counted and dropped, as the kernel would.
final class MemoryMediaNetwork: Sendable {
    private struct State {
        var sockets: [SocketAddress: MemoryMediaSocket] = [:]
        var devices: [SocketAddress: [(bytes: [UInt8], source: SocketAddress)]] = [:]
        var undeliverable = 0
    }

    private let state = Mutex(State())

    /// An address a test device receives on.
    func attachDevice(_ address: SocketAddress) {
        state.withLock { $0.devices[address] = [] }
    }

    /// Takes what arrived for a device, oldest first.
    func takeDeviceInbox(_ address: SocketAddress) -> [(bytes: [UInt8], source: SocketAddress)] {
        state.withLock { state in
            let inbox = state.devices[address] ?? []
            state.devices[address] = []
            return inbox
        }
    }

    var undeliverable: Int { state.withLock { $0.undeliverable } }

    func add(_ socket: MemoryMediaSocket) { state.withLock { $0.sockets[socket.localAddress] = socket } }
    func remove(_ socket: MemoryMediaSocket) { _ = state.withLock { $0.sockets.removeValue(forKey: socket.localAddress) } }

    /// Sends a datagram from `source` to `destination`.
    func send(_ bytes: [UInt8], from source: SocketAddress, to destination: SocketAddress) {
        let socket = state.withLock { state -> MemoryMediaSocket? in
            if let socket = state.sockets[destination] { return socket }
            if state.devices[destination] != nil {
                state.devices[destination]?.append((bytes, source))
            } else {
                state.undeliverable += 1
            }
            return nil
        }
        socket?.arrived(bytes, from: source)
    }
}

/// A media socket of the anchor on the memory network.
final class MemoryMediaSocket: MediaSocket {
    let localAddress: SocketAddress
    private let network: MemoryMediaNetwork
    private let state = Mutex<(inbox: [(bytes: [UInt8], source: SocketAddress)], closed: Bool,
                               watcher: (loop: ManualMediaLoop, onReadable: @Sendable () -> Void)?)>(([], false, nil))

    init(localAddress: SocketAddress, network: MemoryMediaNetwork) {
        self.localAddress = localAddress
        self.network = network
    }

    var isClosed: Bool { state.withLock { $0.closed } }

    func watch(on loop: ManualMediaLoop, onReadable: @escaping @Sendable () -> Void) {
        state.withLock { $0.watcher = (loop, onReadable) }
    }

    func unwatch() { state.withLock { $0.watcher = nil } }

    /// A datagram for this socket: kept, and the watching loop told (level-triggered, as
    /// epoll: the anchor reads until the socket is empty).
    func arrived(_ bytes: [UInt8], from source: SocketAddress) {
        let watcher = state.withLock { state -> (loop: ManualMediaLoop, onReadable: @Sendable () -> Void)? in
            guard !state.closed else { return nil }
            state.inbox.append((bytes, source))
            return state.watcher
        }
        if let watcher { watcher.loop.execute(watcher.onReadable) }
    }

    func receive(into batch: UDPReceiveBatch) throws(NetError) -> Int {
        let taken = state.withLock { state -> [(bytes: [UInt8], source: SocketAddress)] in
            let taken = Array(state.inbox.prefix(batch.capacity))
            state.inbox.removeFirst(taken.count)
            return taken
        }
        return batch.fill(taken)
    }

    func send(_ bytes: UnsafeRawBufferPointer, to destination: SocketAddress) throws(NetError) -> Bool {
        try send(Array(bytes), to: destination)
    }

    func send(_ bytes: [UInt8], to destination: SocketAddress) throws(NetError) -> Bool {
        guard !isClosed else { return false }
        network.send(bytes, from: localAddress, to: destination)
        return true
    }

    func close() {
        let first = state.withLock { state -> Bool in
            defer { state.closed = true }
            return !state.closed
        }
        if first { network.remove(self) }
    }
}

/// The anchor's ports on the memory network: 127.0.0.1 from `firstPort` up.
final class MemoryMediaPorts: MediaPorts {
    private let network: MemoryMediaNetwork
    private let opened = Mutex<[MemoryMediaSocket]>([])
    private let firstPort: UInt16

    init(network: MemoryMediaNetwork, firstPort: UInt16 = 30_000) {
        self.network = network
        self.firstPort = firstPort
    }

    func openMediaSocket() throws(NetError) -> any MediaSocket {
        opened.withLock { opened in
            let socket = MemoryMediaSocket(localAddress: .ipv4Loopback(port: firstPort + UInt16(opened.count)), network: network)
            opened.append(socket)
            network.add(socket)
            return socket
        }
    }

    var allocatedCount: Int { opened.withLock { $0.filter { !$0.isClosed }.count } }
}

/// A media loop in virtual time: a `ManualScheduler` that also watches memory sockets.
final class ManualMediaLoop: MediaLoop {
    let scheduler: ManualScheduler

    init(_ scheduler: ManualScheduler) { self.scheduler = scheduler }

    var now: ContinuousClock.Instant { scheduler.now }
    var inScheduler: Bool { scheduler.inScheduler }
    @discardableResult func execute(_ work: @escaping @Sendable () -> Void) -> Bool { scheduler.execute(work) }
    @discardableResult func schedule(at deadline: ContinuousClock.Instant, _ work: @escaping @Sendable () -> Void) -> TimerID {
        scheduler.schedule(at: deadline, work)
    }
    @discardableResult func cancel(_ timer: TimerID) -> Bool { scheduler.cancel(timer) }
    func runAndWait<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T? { scheduler.runAndWait(body) }

    func watch(_ socket: any MediaSocket, onReadable: @escaping () -> Void) throws(NetError) {
        guard let socket = socket as? MemoryMediaSocket else { preconditionFailure("a ManualMediaLoop watches memory sockets") }
        // The anchor's handler is loop-bound (not Sendable); this loop runs it on the test's
        // thread only, as the scheduler's work.
        nonisolated(unsafe) let handler = onReadable
        socket.watch(on: self) { handler() }
    }

    func unwatch(_ socket: any MediaSocket) {
        (socket as? MemoryMediaSocket)?.unwatch()
    }
}
