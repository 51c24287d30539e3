import Glibc
import Synchronization
import ParleyNetCore
import ParleyNetLinux
import ParleyHTTP
import ParleyWebSocket
@testable import ParleyEdgeIO
import ParleyWebSocketClientIO

/// A lock-protected value shared with handlers that run on loop threads.
final class Locked<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { storage.withLock { body(&$0) } }
    var value: Value { storage.withLock { $0 } }
}

/// Polls `condition` every 2 ms until it holds or `timeout` passes (a safety net, not a
/// timing assertion). Returns the final value.
@discardableResult
func waitUntil(timeout: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while !condition() {
        if ContinuousClock.now >= deadline { return condition() }
        usleep(2000)
    }
    return true
}

/// What the test servers saw, for assertions.
struct Seen: Sendable {
    var opened = 0
    var closes: [UInt16] = []
    var sockets: [EdgeWebSocket] = []
}

/// A server on 127.0.0.1 (and ::1 when asked) port 0 whose HTTP handler answers
/// `METHOD PATH BODYLENGTH`, and whose `/ws` route echoes every message. An upgrade with
/// query `deny` is refused with 403.
func makeServer(_ tweak: (inout EdgeConfiguration) -> Void = { _ in }, ipv6: Bool = false, echo: Bool = true,
                seen: Locked<Seen> = Locked(Seen())) throws -> EdgeServer {
    var addresses = [SocketAddress.ipv4Loopback(port: 0)]
    if ipv6 { addresses.append(.ipv6Loopback(port: 0)) }
    var configuration = EdgeConfiguration(listenAddresses: addresses, loopCount: 2)
    tweak(&configuration)
    let route = WebSocketRoute(
        path: "/ws",
        accept: { request, _ in request.query == "deny" ? .reject(status: 403, message: "denied") : .accept() },
        onOpen: { socket in seen.withLock { $0.opened += 1; $0.sockets.append(socket) } },
        onMessage: { socket, message in if echo { socket.send(message) } },
        onClose: { _, close in seen.withLock { $0.closes.append(close.code?.rawValue ?? 0) } })
    let handlers = EdgeHandlers(http: { request, _ in
        HTTPResponse.text(status: 200, "\(request.method) \(request.path) \(request.body.count)")
    }, webSocket: route)
    return try EdgeServer(configuration: configuration, handlers: handlers)
}

/// A plain TCP client speaking raw bytes, for HTTP tests.
final class RawClient {
    let socket: TCPSocket
    private(set) var received: [UInt8] = []
    private(set) var sawEndOfStream = false

    init(_ address: SocketAddress) throws {
        socket = try TCPSocket.connect(to: address, timeout: .seconds(5))
    }

    func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        for _ in 0..<10_000 where offset < bytes.count {
            offset += try socket.write(bytes, from: offset)
            if offset < bytes.count { _ = socket.waitUntilWritable(timeout: .seconds(1)) }
        }
    }

    /// Reads until `done(received)` holds, the peer closes, or `timeout` passes.
    @discardableResult
    func read(timeout: Duration = .seconds(10), until done: ([UInt8]) -> Bool) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !done(received) && !sawEndOfStream {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return false }
            guard socket.waitUntilReadable(timeout: remaining) else { return false }
            switch try? socket.read(into: &buffer) {
            case .bytes(let count)?: received += buffer[0..<count]
            case .wouldBlock?: continue
            case .endOfStream?, nil: sawEndOfStream = true
            }
        }
        return done(received)
    }

    /// Reads until the server closes the connection (or `timeout`); returns whether it did.
    func readToEnd(timeout: Duration = .seconds(10)) -> Bool {
        read(timeout: timeout) { _ in false }
        return sawEndOfStream
    }

    /// The complete responses received so far.
    var responses: [TestResponse] { TestResponse.split(received) }
}

/// A response cut out of a byte stream by its Content-Length.
struct TestResponse: Equatable {
    var status: Int
    var head: String
    var body: String

    static func split(_ bytes: [UInt8]) -> [TestResponse] {
        var responses: [TestResponse] = []
        var start = 0
        while let end = find([0x0d, 0x0a, 0x0d, 0x0a], in: bytes, from: start) {
            let head = String(decoding: bytes[start..<end], as: UTF8.self)
            let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
            var length = 0
            for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
                length = Int(line.dropFirst("content-length:".count).trimmingCharacters()) ?? 0
            }
            let bodyStart = end + 4
            guard bodyStart + length <= bytes.count else { break }
            responses.append(TestResponse(status: status, head: head,
                                          body: String(decoding: bytes[bodyStart..<(bodyStart + length)], as: UTF8.self)))
            start = bodyStart + length
        }
        return responses
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        var index = start
        while index + needle.count <= bytes.count {
            if bytes[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}

extension Substring {
    func trimmingCharacters() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}

/// Receives events until a `.closed` arrives (or `timeout`); returns the close code.
func awaitClose(_ client: WebSocketClient, timeout: Duration = .seconds(10)) -> UInt16? {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    for _ in 0..<100_000 {
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else { return nil }
        guard let event = try? client.receive(timeout: remaining) else { return nil }
        if case .closed(let close) = event { return close.code?.rawValue ?? 0 }
    }
    return nil
}
