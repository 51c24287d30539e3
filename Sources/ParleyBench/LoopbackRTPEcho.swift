import Foundation
import Glibc
import ParleyNetCore
import ParleyNetLinux
import Synchronization

/// The smallest stand-in for a mixer: one UDP socket on 127.0.0.1 that sends every datagram
/// back to where it came from, on a thread of its own. It checks the load generator's
/// sending and counting without a real mixer (ParleyBenchTests).
final class LoopbackRTPEcho: Sendable {
    let socket: UDPSocket
    private let stopFlag = Atomic<Bool>(false)
    private let running = Atomic<Bool>(true)
    private let echoedCount = Atomic<Int>(0)

    init() throws {
        socket = try UDPSocket(bindingTo: .ipv4Loopback(port: 0), options: UDPSocket.Options(receiveBufferSize: 256 * 1024))
        Thread.detachNewThread { [self] in
            echo()
            running.store(false, ordering: .releasing)
        }
    }

    /// Where participants send.
    var address: SocketAddress { socket.localAddress }

    /// Datagrams sent back so far.
    var echoed: Int { echoedCount.load(ordering: .relaxed) }

    /// Stops the thread (waiting at most a second) and closes the socket.
    func stop() {
        stopFlag.store(true, ordering: .releasing)
        for _ in 0..<100 where running.load(ordering: .acquiring) { usleep(10_000) }
        socket.close()
    }

    private func echo() {
        var descriptor = pollfd(fd: socket.fileDescriptor, events: Int16(POLLIN), revents: 0)
        var buffer = [UInt8](repeating: 0, count: 2048)
        while !stopFlag.load(ordering: .acquiring) {
            guard poll(&descriptor, 1, 20) > 0 else { continue }
            while true {
                let got = buffer.withUnsafeMutableBytes { try? socket.receive(into: $0) }
                guard let (count, source) = got ?? nil else { break }
                _ = buffer[..<count].withUnsafeBytes { try? socket.send($0, to: source) }
                echoedCount.add(1, ordering: .relaxed)
            }
        }
    }
}
