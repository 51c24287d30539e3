import Foundation
import ParleyNetCore
import ParleyNetLinux
import ParleySDK
@_spi(ParleyEngines) @testable import ParleySDKCore

/// A TCP relay on 127.0.0.1 in front of the test server, so a test can drop the client's
/// TCP connection from the server's side without a close frame (what a dead network or a
/// crashed server looks like: the client sees 1006). Bounded: each pump stops when its
/// socket closes or the proxy stops.
final class DroppingProxy: @unchecked Sendable {
    // @unchecked: sockets are thread-safe to close; lists and flags are `Locked`.
    let listener: TCPListener
    private let target: SocketAddress
    private let connections = Locked<[TCPSocket]>([])
    private let stopped = Locked(false)

    init(to target: SocketAddress) throws {
        listener = try TCPListener(bindingTo: .ipv4Loopback(port: 0))
        self.target = target
        Thread { [self] in acceptLoop() }.start()
    }

    var url: String { "http://127.0.0.1:\(listener.localAddress.port)" }

    /// Closes every relayed connection, both halves, at once.
    func dropAll() {
        let sockets = connections.withLock { list in defer { list = [] }; return list }
        sockets.forEach { $0.close() }
    }

    func stop() {
        stopped.withLock { $0 = true }
        dropAll()
        listener.close()
    }

    private func acceptLoop() {
        // At most 10 minutes of 10 ms polls.
        for _ in 0..<60_000 where !stopped.current {
            guard let client = try? listener.accept() else {
                Thread.sleep(forTimeInterval: 0.01)
                continue
            }
            guard let upstream = try? TCPSocket.connect(to: target, timeout: .seconds(2)) else {
                client.close()
                continue
            }
            connections.withLock { $0 += [client, upstream] }
            Thread { [self] in pump(from: client, to: upstream) }.start()
            Thread { [self] in pump(from: upstream, to: client) }.start()
        }
    }

    private func pump(from source: TCPSocket, to destination: TCPSocket) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !stopped.current && !source.isClosed && !destination.isClosed {
            guard source.waitUntilReadable(timeout: .milliseconds(50)) else { continue }
            guard case .bytes(let count)? = try? source.read(into: &buffer) else {
                if source.isClosed || destination.isClosed { return }
                if case .wouldBlock? = try? source.read(into: &buffer) { continue }
                destination.shutdownWrite()
                return
            }
            var offset = 0
            let bytes = Array(buffer[0..<count])
            while offset < bytes.count {
                guard let written = try? destination.write(bytes, from: offset) else { return }
                offset += written
                if written == 0 && !destination.waitUntilWritable(timeout: .seconds(1)) { return }
            }
        }
    }
}
