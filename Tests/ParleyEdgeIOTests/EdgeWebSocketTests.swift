import Testing
import Glibc
import Dispatch
import ParleyNetCore
import ParleyNetLinux
import ParleyWebSocket
import ParleyHTTP
@testable import ParleyEdgeIO
import ParleyWebSocketClientIO

@Suite("Edge server: WebSockets over real sockets")
struct EdgeWebSocketTests {
    @Test("Echo: text and binary round-trip through the client")
    func echo() throws {
        let seen = Locked(Seen())
        let server = try makeServer(seen: seen)
        defer { server.shutdown() }
        let client = try WebSocketClient(connectingTo: server.localAddresses[0], path: "/ws?token=abc")
        try client.send(.text("héllo"))
        #expect(try client.receive(timeout: .seconds(10)) == .message(.text("héllo")))
        try client.send(.binary([0, 1, 2, 255]))
        #expect(try client.receive(timeout: .seconds(10)) == .message(.binary([0, 1, 2, 255])))
        try client.ping([7])
        try client.send(.text("after ping"))
        #expect(try client.receive(timeout: .seconds(10)) == .message(.text("after ping")))
        client.close()
        #expect(waitUntil { seen.value.closes == [1000] })
        #expect(seen.value.sockets.first?.request.query == "token=abc")
    }

    @Test("Upgrade refused by the route: 403; unknown path goes to the HTTP handler")
    func rejected() throws {
        let server = try makeServer()
        defer { server.shutdown() }
        do {
            _ = try WebSocketClient(connectingTo: server.localAddresses[0], path: "/ws?deny")
            Issue.record("upgrade was accepted")
        } catch {
            #expect(error.rejectedStatus == 403)
        }
        do {
            _ = try WebSocketClient(connectingTo: server.localAddresses[0], path: "/elsewhere")
            Issue.record("upgrade was accepted")
        } catch {
            #expect(error.rejectedStatus == 200)
        }
    }

    @Test("A route may refuse with its own response (426 with JSON), and choose its rate-limit close code")
    func customRefusalAndCloseCode() throws {
        var configuration = EdgeConfiguration(listenAddresses: [.ipv4Loopback(port: 0)], loopCount: 1,
                                              maxMessagesPerSecond: 1, messageBurst: 2)
        configuration.rateLimitCloseCode = WebSocketCloseCode(rawValue: 4005)
        let route = WebSocketRoute(path: "/ws", accept: { request, _ in
            request.subprotocols.contains("parley.v1")
                ? .accept(subprotocol: "parley.v1")
                : .respond(HTTPResponse.json(status: 426, body: Array(#"{"code":"unsupported_version"}"#.utf8)))
        }, onMessage: { _, _ in })
        let server = try EdgeServer(configuration: configuration, handlers: EdgeHandlers(webSocket: route))
        defer { server.shutdown() }
        do {
            _ = try WebSocketClient(connectingTo: server.localAddresses[0], path: "/ws")
            Issue.record("upgrade without the subprotocol was accepted")
        } catch {
            #expect(error.rejectedStatus == 426)
        }
        let client = try WebSocketClient(connectingTo: server.localAddresses[0], path: "/ws", subprotocols: ["parley.v1"])
        #expect(client.subprotocol == "parley.v1")
        for index in 0..<10 { try? client.send(.text("\(index)")) }
        #expect(awaitClose(client) == 4005)
    }

    @Test("RFC 6455 §7.4.1: a message over the size limit closes with 1009")
    func oversized() throws {
        let seen = Locked(Seen())
        let server = try makeServer({ $0.maxMessageSize = 1024 }, seen: seen)
        defer { server.shutdown() }
        let client = try WebSocketClient(connectingTo: server.localAddresses[0], path: "/ws")
        try client.send(.binary([UInt8](repeating: 1, count: 1000)))
        #expect(try client.receive(timeout: .seconds(10)) == .message(.binary([UInt8](repeating: 1, count: 1000))))
        try client.send(.binary([UInt8](repeating: 2, count: 5000)))
        #expect(awaitClose(client) == 1009)
        #expect(waitUntil { seen.value.closes == [1009] })
    }

    @Test("RFC 6455 §7.4.1: a message flood closes with 1008")
    func flood() throws {
        let seen = Locked(Seen())
        let server = try makeServer({ $0.maxMessagesPerSecond = 10; $0.messageBurst = 20 }, echo: false, seen: seen)
        defer { server.shutdown() }
        let client = try WebSocketClient(connectingTo: server.localAddresses[0], path: "/ws")
        for index in 0..<500 {
            do { try client.send(.text("m\(index)")) } catch { break }
        }
        #expect(awaitClose(client) == 1008)
        #expect(waitUntil { seen.value.closes == [1008] })
        #expect(server.statistics.rateLimited == 1)
    }

    @Test("Over the rate with onRateLimited: replies the application sends from another thread come first, then its close")
    func rateLimitLeftToTheApplication() throws {
        let configuration = EdgeConfiguration(listenAddresses: [.ipv4Loopback(port: 0)], loopCount: 1,
                                              maxMessagesPerSecond: 1, messageBurst: 5)
        // The application answers on a thread of its own, as parleyd's engine does.
        let worker = DispatchQueue(label: "edge-test.worker")
        let delivered = Locked(0)
        let route = WebSocketRoute(path: "/ws", onMessage: { socket, message in
            delivered.withLock { $0 += 1 }
            worker.async { socket.send(message) }
        }, onRateLimited: { socket in
            worker.async { socket.close(code: WebSocketCloseCode(rawValue: 4005), reason: "slow down") }
        })
        let server = try EdgeServer(configuration: configuration, handlers: EdgeHandlers(webSocket: route))
        defer { server.shutdown() }
        let client = try WebSocketClient(connectingTo: server.localAddresses[0], path: "/ws")
        for index in 0..<20 { try? client.send(.text("m\(index)")) }
        var echoes: [String] = []
        var closeCode: UInt16?
        for _ in 0..<100 {
            guard let event = try? client.receive(timeout: .seconds(10)) else { break }
            if case .message(.text(let text)) = event { echoes.append(text) }
            if case .closed(let close) = event { closeCode = close.code?.rawValue; break }
        }
        #expect(closeCode == 4005)
        // The burst of 5 (and at most one more refilled meanwhile) delivered and answered, nothing after.
        #expect(echoes.count == delivered.value)
        #expect(echoes == (0..<echoes.count).map { "m\($0)" })
        #expect((5...7).contains(echoes.count), "\(echoes)")
        #expect(server.statistics.rateLimited == 1)
    }

    @Test("Over the rate with onRateLimited that never closes: the edge closes after the handshake timeout")
    func rateLimitNotClosedByTheApplication() throws {
        var configuration = EdgeConfiguration(listenAddresses: [.ipv4Loopback(port: 0)], loopCount: 1,
                                              handshakeTimeout: .milliseconds(300), maxMessagesPerSecond: 1, messageBurst: 2)
        configuration.rateLimitCloseCode = WebSocketCloseCode(rawValue: 4005)
        let told = Locked(0)
        let route = WebSocketRoute(path: "/ws", onMessage: { _, _ in }, onRateLimited: { _ in told.withLock { $0 += 1 } })
        let server = try EdgeServer(configuration: configuration, handlers: EdgeHandlers(webSocket: route))
        defer { server.shutdown() }
        let client = try WebSocketClient(connectingTo: server.localAddresses[0], path: "/ws")
        for index in 0..<10 { try? client.send(.text("\(index)")) }
        #expect(awaitClose(client) == 4005)
        #expect(told.value == 1)
    }

    @Test("Idle WebSocket: pinged at half the idle timeout, closed with 1001 at the end when silent")
    func idle() throws {
        let seen = Locked(Seen())
        let server = try makeServer({ $0.idleTimeout = .milliseconds(400) }, seen: seen)
        defer { server.shutdown() }
        // A raw socket that completes the handshake but never answers pings.
        let raw = try RawClient(server.localAddresses[0])
        try raw.send("GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        #expect(raw.readToEnd())
        let text = String(decoding: raw.received, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 101"))
        // After the 101 head: a ping (0x89 0x00), then a close frame with 1001 (0x03e9).
        let frames = Array(raw.received.split(separator: 0x0a).last ?? [])
        #expect(frames.starts(with: [0x89, 0x00]))
        #expect(frames.dropFirst(2).starts(with: [0x88]))
        #expect(waitUntil { seen.value.closes == [1001] })
    }

    @Test("Back-pressure: a client that does not read gets its connection closed; server memory stays bounded")
    func backPressure() throws {
        let seen = Locked(Seen())
        let server = try makeServer({ $0.connection = .init(pauseReadingAbove: 64 * 1024, maxQueuedBytes: 512 * 1024) },
                                    echo: false, seen: seen)
        defer { server.shutdown() }
        let client = try WebSocketClient(connectingTo: server.localAddresses[0], path: "/ws")
        client.socket.setBufferSizes(send: nil, receive: 4096)
        #expect(waitUntil { seen.value.sockets.count == 1 })
        let socket = try #require(seen.value.sockets.first)
        let chunk = [UInt8](repeating: 0x42, count: 32 * 1024)
        var sent = 0
        let deadline = ContinuousClock.now.advanced(by: .seconds(20))
        while sent < 4000 && ContinuousClock.now < deadline {
            guard socket.send(.binary(chunk)) else { break }
            sent += 1
            if sent % 16 == 0 { usleep(1000) }
        }
        // Far less than 4000 * 32 KiB went out: the sender was stopped by the limit.
        #expect(sent < 4000)
        #expect(waitUntil { !socket.isOpen })
        #expect(waitUntil { seen.value.closes.count == 1 })
        #expect(waitUntil { server.connectionCount == 0 })
        // Another client is served normally afterwards.
        let other = try WebSocketClient(connectingTo: server.localAddresses[0], path: "/ws")
        #expect(other.isOpen)
    }

    @Test("200 concurrent WebSocket connections echo, over 4 client threads")
    func concurrentEcho() throws {
        let server = try makeServer { $0.maxMessagesPerSecond = 10_000; $0.messageBurst = 10_000 }
        defer { server.shutdown() }
        let address = server.localAddresses[0]
        let failures = Locked(0)
        let echoed = Locked(0)
        var threads: [pthread_t] = []
        for thread in 0..<4 {
            let work: @Sendable () -> Void = {
                var clients: [WebSocketClient] = []
                for _ in 0..<50 {
                    guard let client = try? WebSocketClient(connectingTo: address, path: "/ws") else {
                        failures.withLock { $0 += 1 }
                        continue
                    }
                    clients.append(client)
                }
                for round in 0..<3 {
                    for (index, client) in clients.enumerated() {
                        let text = "t\(thread) c\(index) r\(round)"
                        guard (try? client.send(.text(text))) != nil,
                              (try? client.receive(timeout: .seconds(10))) == .message(.text(text)) else {
                            failures.withLock { $0 += 1 }
                            continue
                        }
                        echoed.withLock { $0 += 1 }
                    }
                }
                for client in clients { client.close(timeout: .milliseconds(500)) }
            }
            threads.append(try startThread(work))
        }
        for thread in threads { pthread_join(thread, nil) }
        #expect(failures.value == 0)
        #expect(echoed.value == 600)
        #expect(server.statistics.webSocketsOpened == 200)
    }

    @Test("A flooding client is closed with 1008 while a well-behaved one keeps echoing")
    func floodBesideGoodClient() throws {
        let server = try makeServer { $0.maxMessagesPerSecond = 20; $0.messageBurst = 40 }
        defer { server.shutdown() }
        let good = try WebSocketClient(connectingTo: server.localAddresses[0], path: "/ws")
        let bad = try WebSocketClient(connectingTo: server.localAddresses[0], path: "/ws")
        for index in 0..<300 {
            do { try bad.send(.binary([UInt8](repeating: 9, count: 512))) } catch { break }
            if index % 30 == 0 {
                try good.send(.text("still here \(index)"))
                #expect(try good.receive(timeout: .seconds(10)) == .message(.text("still here \(index)")))
            }
        }
        #expect(awaitClose(bad) == 1008)
        try good.send(.text("after"))
        #expect(try good.receive(timeout: .seconds(10)) == .message(.text("after")))
    }

    @Test("Shutdown closes open WebSockets with 1001")
    func shutdown() throws {
        let server = try makeServer()
        let client = try WebSocketClient(connectingTo: server.localAddresses[0], path: "/ws")
        try client.send(.text("x"))
        #expect(try client.receive(timeout: .seconds(10)) == .message(.text("x")))
        server.shutdown()
        #expect(awaitClose(client) == 1001)
    }

    @Test("Frames pipelined right behind the upgrade request are not lost")
    func framesAfterHead() throws {
        let server = try makeServer()
        defer { server.shutdown() }
        let raw = try RawClient(server.localAddresses[0])
        let frame = WebSocketFrame.text("early", maskingKey: WebSocketMaskingKey(1, 2, 3, 4)).serialized()
        try raw.send(Array(("GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8) + frame)
        let echo = WebSocketFrame.text("early").serialized()
        #expect(raw.read { $0.count >= echo.count && Array($0.suffix(echo.count)) == echo })
    }

    // One grammar: the upgrade is judged from the request the HTTP parser read. Before,
    // its head was parsed a second time by the WebSocket module's own parser, and the two
    // could disagree about the same bytes.

    @Test("A header value that is not UTF-8 gets the same 400 on a plain request and on an upgrade")
    func oneVerdictForInvalidUTF8() throws {
        let server = try makeServer()
        defer { server.shutdown() }
        let upgrade = "GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        for head in ["GET /plain HTTP/1.1\r\nHost: t\r\n", upgrade] {
            let raw = try RawClient(server.localAddresses[0])
            try raw.send(Array((head + "X-Name: caf").utf8) + [0xe9] + Array("\r\n\r\n".utf8))
            #expect(raw.readToEnd())
            #expect(raw.received.starts(with: Array("HTTP/1.1 400 ".utf8)),
                    "\(head.prefix(9)): \(String(decoding: raw.received.prefix(40), as: UTF8.self))")
        }
    }

    @Test("The edge's own header limit applies to an upgrade, not a second parser's")
    func upgradeUnderTheEdgesHeaderLimit() throws {
        let server = try makeServer { $0.httpLimits.maxHeaderCount = 200 }
        defer { server.shutdown() }
        let extra = (0..<120).map { (name: "X-Field-\($0)", value: "v") }
        let client = try WebSocketClient(connectingTo: server.localAddresses[0], path: "/ws", headers: extra)
        try client.send(.text("many headers"))
        #expect(try client.receive(timeout: .seconds(10)) == .message(.text("many headers")))
        client.close()
        // Past the edge's limit the HTTP parser's 431 is the answer, for upgrades as for any request.
        let tooMany = (0..<201).map { (name: "X-Field-\($0)", value: "v") }
        do {
            _ = try WebSocketClient(connectingTo: server.localAddresses[0], path: "/ws", headers: tooMany)
            Issue.record("an upgrade past the header limit was accepted")
        } catch {
            #expect(error.rejectedStatus == 431)
        }
    }
}

/// Starts a joinable thread running `work`.
func startThread(_ work: @escaping @Sendable () -> Void) throws -> pthread_t {
    final class Box: @unchecked Sendable { let work: @Sendable () -> Void; init(_ work: @escaping @Sendable () -> Void) { self.work = work } }
    let context = Unmanaged.passRetained(Box(work)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { context in
        let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
        box.work()
        return nil
    }, context)
    guard result == 0 else {
        Unmanaged<Box>.fromOpaque(context).release()
        throw EdgeTestError.threadFailed
    }
    return thread
}

enum EdgeTestError: Error { case threadFailed }
