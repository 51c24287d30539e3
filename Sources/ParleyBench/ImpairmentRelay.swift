import Foundation
import Glibc
import Synchronization

/// What the impairment relay does to every datagram it sends toward a client.
struct PathImpairment: Sendable, CustomStringConvertible {
    /// Chance of dropping a datagram, 0-100.
    var lossPercent: Double = 0
    /// Mean one-way delay added, in milliseconds.
    var delayMilliseconds: Double = 0
    /// Half the width of the uniform spread around the mean: 40 ± 20 ms is 20 here. Each
    /// datagram draws its own delay, so datagrams overtake one another as on a real path.
    var jitterMilliseconds: Double = 0
    /// Seeds the draws: each port has its own generator made from it, so a flow's pattern
    /// does not depend on how the other flows interleave with it.
    var seed: UInt64 = 1

    var description: String {
        var parts: [String] = []
        if lossPercent > 0 { parts.append("\(fixed(lossPercent, lossPercent < 1 ? 1 : 0)) % loss") }
        if delayMilliseconds > 0 || jitterMilliseconds > 0 {
            parts.append("\(Int(delayMilliseconds))±\(Int(jitterMilliseconds)) ms")
        }
        return parts.isEmpty ? "clean" : parts.joined(separator: ", ")
    }
}

/// Datagrams the relay forwarded and dropped, both directions together.
struct ImpairmentRelayCounts: Sendable {
    var forwarded = 0
    var dropped = 0
    var flows = 0
}

/// A seeded UDP relay that impairs a path on loopback, since this kernel has no netem.
///
/// It stands in front of a server's media ports: a socket on `frontAddress` for every port
/// of `ports`, forwarding what clients send there to `backAddress` on the same port, from
/// one socket of its own per client flow (bound to an ephemeral port of `backAddress`), so
/// that the server's replies come back to that socket and go out of the front socket to
/// the client. An ICE-lite server therefore sees the relay's flow socket as its peer (a
/// peer-reflexive address) and a client sees replies from the address it sent to, so ICE,
/// DTLS and SRTP run through it unchanged.
///
/// Only datagrams toward a client are impaired (its downlink); those toward the server
/// pass at once. Audio through parleyd crosses two legs, the caller's and the callee's, so
/// impairing both directions of both would lose 1 - (1 - p)^2 of it, near twice the rate
/// asked for; this way each direction of the call crosses the impairment exactly once.
/// Every datagram toward a client, STUN and DTLS included, may be dropped and is delayed by
/// its own draw: a real path does not spare the handshakes.
///
/// Runs on a thread of its own until `stop()`.
final class ImpairmentRelay: Sendable {
    private let stopRequested = Mutex(false)
    private let counts = Mutex(ImpairmentRelayCounts())
    private let finished = DispatchSemaphore(value: 0)

    /// Binds the front sockets (throws if one cannot be bound) and starts forwarding.
    init(frontAddress: String, backAddress: String, ports: ClosedRange<UInt16>, impairment: PathImpairment) throws {
        var fronts: [Int32] = []
        for port in ports {
            guard let fd = Self.boundSocket(frontAddress, port) else {
                for open in fronts { close(open) }
                throw ChildProcess.Failure(description: "impairment relay cannot bind \(frontAddress):\(port): \(String(cString: strerror(errno)))")
            }
            fronts.append(fd)
        }
        guard let back = Self.address(backAddress, 0) else {
            for open in fronts { close(open) }
            throw ChildProcess.Failure(description: "impairment relay: bad address \(backAddress)")
        }
        let frontPorts = Array(ports)
        let sockets = fronts
        let thread = Thread { [self] in
            var loop = RelayLoop(fronts: sockets, frontPorts: frontPorts, back: back, impairment: impairment)
            loop.run(until: { self.stopRequested.withLock { $0 } }, counts: counts)
            loop.closeAll()
            finished.signal()
        }
        thread.name = "impairment-relay"
        thread.start()
    }

    /// Stops forwarding (datagrams still held are dropped), closes every socket, and
    /// returns what was forwarded.
    func stop() -> ImpairmentRelayCounts {
        stopRequested.withLock { $0 = true }
        finished.wait()
        return counts.withLock { $0 }
    }

    /// `ip:port` as a socket address, or nil for a bad IPv4 address.
    static func address(_ ip: String, _ port: UInt16) -> sockaddr_in? {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, ip, &address.sin_addr) == 1 else { return nil }
        return address
    }

    /// A non-blocking UDP socket bound to `ip:port`.
    static func boundSocket(_ ip: String, _ port: UInt16) -> Int32? {
        guard var address = address(ip, port) else { return nil }
        return boundSocket(&address)
    }

    /// A non-blocking UDP socket bound to `address` (port 0: an ephemeral one).
    static func boundSocket(_ address: inout sockaddr_in) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0 else {
            close(fd)
            return nil
        }
        return fd
    }
}

extension BenchRandom {
    /// A uniform draw in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) / Double(UInt64(1) << 53) }
}

/// The relay thread's state: its sockets, flows and the datagrams it holds back.
private struct RelayLoop {
    /// One client flow: who sent to which front socket, and the socket the relay forwards
    /// its datagrams from.
    struct Flow {
        let frontIndex: Int
        let client: sockaddr_in
        let socket: Int32
    }

    /// A datagram held until its delay has passed.
    struct Held {
        let due: UInt64
        let socket: Int32
        let destination: sockaddr_in
        let bytes: [UInt8]
    }

    let fronts: [Int32]
    let frontPorts: [UInt16]
    let back: sockaddr_in
    let impairment: PathImpairment
    var flows: [Flow] = []
    /// Flow index by (front index, client address, client port).
    var flowIndex: [UInt64: Int] = [:]
    var held: [Held] = []
    /// Generators by front index, for the datagrams toward the client.
    var generators: [BenchRandom]
    var local = ImpairmentRelayCounts()

    init(fronts: [Int32], frontPorts: [UInt16], back: sockaddr_in, impairment: PathImpairment) {
        self.fronts = fronts
        self.frontPorts = frontPorts
        self.back = back
        self.impairment = impairment
        generators = frontPorts.map { BenchRandom(seed: impairment.seed &* 0x1000_0001 &+ UInt64($0)) }
    }

    mutating func run(until stopped: () -> Bool, counts: borrowing Mutex<ImpairmentRelayCounts>) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var descriptors: [pollfd] = []
        var lastPublished = monotonicNanoseconds()
        while !stopped() {
            let now = monotonicNanoseconds()
            sendDue(now: now)
            // Wake for the next due datagram, and at least every 10 ms to see `stopped`.
            var timeout: Int32 = 10
            if let next = held.map(\.due).min() {
                timeout = next <= now ? 0 : Int32(min(10, (next - now + 999_999) / 1_000_000))
            }
            descriptors.removeAll(keepingCapacity: true)
            for fd in fronts { descriptors.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
            for flow in flows { descriptors.append(pollfd(fd: flow.socket, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready > 0 {
                let arrived = monotonicNanoseconds()
                for (position, descriptor) in descriptors.enumerated() where descriptor.revents & Int16(POLLIN) != 0 {
                    if position < fronts.count {
                        receiveFromClients(frontIndex: position, buffer: &buffer, now: arrived)
                    } else {
                        receiveFromServer(flow: flows[position - fronts.count], buffer: &buffer, now: arrived)
                    }
                }
            }
            if now - lastPublished > 100_000_000 {
                let snapshot = local
                counts.withLock { $0 = snapshot }
                lastPublished = now
            }
        }
        let snapshot = local
        counts.withLock { $0 = snapshot }
    }

    mutating func receiveFromClients(frontIndex: Int, buffer: inout [UInt8], now: UInt64) {
        while true {
            var client = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let n = buffer.withUnsafeMutableBytes { bytes in
                withUnsafeMutablePointer(to: &client) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fronts[frontIndex], bytes.baseAddress, bytes.count, 0, $0, &length) }
                }
            }
            guard n >= 0 else { return }
            let key = UInt64(client.sin_addr.s_addr) << 32 | UInt64(client.sin_port) << 16 | UInt64(frontIndex)
            let flow: Flow
            if let known = flowIndex[key] {
                flow = flows[known]
            } else {
                var from = back
                guard let socket = ImpairmentRelay.boundSocket(&from) else { continue }
                flow = Flow(frontIndex: frontIndex, client: client, socket: socket)
                flowIndex[key] = flows.count
                flows.append(flow)
                local.flows += 1
            }
            var server = back
            server.sin_port = frontPorts[frontIndex].bigEndian
            send(Array(buffer[..<n])[...], from: flow.socket, to: server)
        }
    }

    mutating func receiveFromServer(flow: Flow, buffer: inout [UInt8], now: UInt64) {
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(flow.socket, $0.baseAddress, $0.count, 0) }
            guard n >= 0 else { return }
            hold(Array(buffer[..<n]), from: fronts[flow.frontIndex], to: flow.client, frontIndex: flow.frontIndex, now: now)
        }
    }

    /// Drops the datagram toward a client or holds it for its drawn delay. Both draws are
    /// made for every datagram, so a flow's loss pattern is the same with or without jitter.
    mutating func hold(_ bytes: [UInt8], from socket: Int32, to destination: sockaddr_in, frontIndex: Int, now: UInt64) {
        let lost = generators[frontIndex].unit() * 100 < impairment.lossPercent
        let spread = (generators[frontIndex].unit() * 2 - 1) * impairment.jitterMilliseconds
        let delay = max(0, impairment.delayMilliseconds + spread)
        if lost {
            local.dropped += 1
            return
        }
        held.append(Held(due: now + UInt64(delay * 1_000_000), socket: socket, destination: destination, bytes: bytes))
    }

    mutating func sendDue(now: UInt64) {
        guard held.contains(where: { $0.due <= now }) else { return }
        // Earliest first, so datagrams due in the same wake-up leave in their drawn order.
        let due = held.filter { $0.due <= now }.sorted { $0.due < $1.due }
        held.removeAll { $0.due <= now }
        for datagram in due { send(datagram.bytes[...], from: datagram.socket, to: datagram.destination) }
    }

    mutating func send(_ bytes: ArraySlice<UInt8>, from socket: Int32, to destination: sockaddr_in) {
        var destination = destination
        let sent = bytes.withUnsafeBytes { bytes in
            withUnsafePointer(to: &destination) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(socket, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        if sent >= 0 { local.forwarded += 1 }
    }

    func closeAll() {
        for fd in fronts { close(fd) }
        for flow in flows { close(flow.socket) }
    }
}

func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
