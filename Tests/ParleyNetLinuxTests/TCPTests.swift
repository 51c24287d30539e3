import Testing
import Glibc
@testable import ParleyNetCore
@testable import ParleyNetLinux

@Suite("TCP: listener, connection, back-pressure")
struct TCPTests {
    /// A loop with one listener whose accepted connections echo what they read.
    final class EchoServer: @unchecked Sendable {
        let loop: EventLoop
        let listener: TCPListener
        let buffer = TCPReadBuffer()
        var connections: [TCPConnection] = []
        let closed = Locked(0)

        init(address: SocketAddress, configuration: TCPConnection.Configuration = .init()) throws {
            loop = try EventLoop(name: "tcp-test")
            listener = try TCPListener(bindingTo: address, reusePort: true)
            let done = Locked(false)
            loop.execute { [self] in
                try? loop.register(listener, onReadable: { [self] in
                    while let socket = try? listener.accept() {
                        let connection = TCPConnection(socket: socket, loop: loop, readBuffer: buffer, configuration: configuration)
                        connections.append(connection)
                        try? connection.start(onRead: { [unowned connection] bytes in
                            connection.write(Array(bytes))
                        }, onClose: { [self] _ in closed.withLock { $0 += 1 } })
                    }
                })
                done.withLock { $0 = true }
            }
            waitUntil { done.value }
        }

        /// Asks the loop whether any connection has reading paused by back-pressure.
        func anyReadingPaused() -> Bool {
            let answer = Locked<Bool?>(nil)
            loop.execute { [self] in answer.withLock { $0 = connections.contains { $0.isReadingPaused } } }
            waitUntil { answer.value != nil }
            return answer.value ?? false
        }

        deinit { loop.shutdown() }
    }

    @Test("Echo over IPv4 and IPv6 loopback; orderly close is reported")
    func echo() throws {
        for address in [SocketAddress.ipv4Loopback(port: 0), .ipv6Loopback(port: 0)] {
            let server = try EchoServer(address: address)
            let client = try TCPSocket.connect(to: server.listener.localAddress)
            #expect(try client.write(Array("hello".utf8)) == 5)
            var buffer = [UInt8](repeating: 0, count: 100)
            #expect(client.waitUntilReadable(timeout: .seconds(5)))
            #expect(try client.read(into: &buffer) == .bytes(5))
            #expect(Array(buffer[0..<5]) == Array("hello".utf8))
            client.close()
            #expect(waitUntil { server.closed.value == 1 })
        }
    }

    @Test("SO_REUSEPORT: two listeners share one port")
    func reusePort() throws {
        let first = try TCPListener(bindingTo: .ipv4Loopback(port: 0), reusePort: true)
        let second = try TCPListener(bindingTo: first.localAddress, reusePort: true)
        #expect(second.localAddress == first.localAddress)
        #expect(throws: NetError.self) { try TCPListener(bindingTo: first.localAddress, reusePort: false) }
    }

    @Test("Connect to a closed port fails with ECONNREFUSED")
    func refused() throws {
        let listener = try TCPListener(bindingTo: .ipv4Loopback(port: 0))
        let address = listener.localAddress
        listener.close()
        do {
            _ = try TCPSocket.connect(to: address, timeout: .seconds(5))
            Issue.record("connected to a closed port")
        } catch {
            #expect(error.errnoName == "ECONNREFUSED")
        }
    }

    @Test("Back-pressure: a peer that sends but never reads stops being read from")
    func backPressure() throws {
        let server = try EchoServer(address: .ipv4Loopback(port: 0),
                                    configuration: .init(pauseReadingAbove: 32 * 1024, maxQueuedBytes: 256 * 1024))
        let client = try TCPSocket.connect(to: server.listener.localAddress)
        client.setBufferSizes(send: 16 * 1024, receive: 4096)
        let chunk = [UInt8](repeating: 7, count: 16 * 1024)
        var sent = 0
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        // Send without reading: the echo fills the server's queue, which pauses reading,
        // which fills the client's send buffer. Bounded by count and time.
        while sent < 64 * 1024 * 1024 && ContinuousClock.now < deadline {
            let written = (try? client.write(chunk)) ?? 0
            sent += written
            if written == 0 && !client.waitUntilWritable(timeout: .milliseconds(200)) { break }
        }
        #expect(sent < 64 * 1024 * 1024)
        #expect(waitUntil { server.anyReadingPaused() })
    }
}
