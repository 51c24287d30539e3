import Testing
import Glibc
import ParleyNetCore
import ParleyHTTP
@testable import ParleyEdgeIO

@Suite("Edge server: HTTP/1.1 over real sockets")
struct EdgeHTTPTests {
    @Test("Keep-alive: several requests on one connection, answered in turn")
    func keepAlive() throws {
        let server = try makeServer()
        defer { server.shutdown() }
        let client = try RawClient(server.localAddresses[0])
        for index in 0..<5 {
            try client.send("GET /r\(index) HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(client.read { TestResponse.split($0).count == index + 1 })
        }
        #expect(client.responses.map(\.body) == (0..<5).map { "GET /r\($0) 0" })
        #expect(!client.sawEndOfStream)
        #expect(server.statistics.accepted == 1)
    }

    @Test("Pipelined requests in one write are answered in order")
    func pipelining() throws {
        let server = try makeServer()
        defer { server.shutdown() }
        let client = try RawClient(server.localAddresses[0])
        var batch = ""
        for index in 0..<20 { batch += "POST /p\(index) HTTP/1.1\r\nHost: t\r\nContent-Length: \(index)\r\n\r\n" + String(repeating: "x", count: index) }
        batch += "GET /last HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
        try client.send(batch)
        #expect(client.readToEnd())
        let bodies = client.responses.map(\.body)
        #expect(bodies == (0..<20).map { "POST /p\($0) \($0)" } + ["GET /last 0"])
        #expect(client.responses.last?.head.contains("Connection: close") == true)
    }

    @Test("Chunked upload arrives decoded")
    func chunkedUpload() throws {
        let server = try makeServer()
        defer { server.shutdown() }
        let client = try RawClient(server.localAddresses[0])
        try client.send("POST /up HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in 0..<10 {
            try client.send("400\r\n" + String(repeating: "a", count: 1024) + "\r\n")
        }
        try client.send("0\r\n\r\n")
        #expect(client.read { TestResponse.split($0).count == 1 })
        #expect(client.responses.first?.body == "POST /up 10240")
    }

    @Test("HTTP/1.0 without keep-alive closes after the response")
    func http10() throws {
        let server = try makeServer()
        defer { server.shutdown() }
        let client = try RawClient(server.localAddresses[0])
        try client.send("GET /old HTTP/1.0\r\n\r\n")
        #expect(client.readToEnd())
        #expect(client.responses.first?.body == "GET /old 0")
    }

    @Test("Bad requests get their status and a close: 400 smuggling, 431, 505")
    func badRequests() throws {
        let server = try makeServer { $0.httpLimits = .init(maxHeadSize: 1024) }
        defer { server.shutdown() }
        let cases: [(String, Int)] = [
            ("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: t\r\nX: " + String(repeating: "y", count: 2000) + "\r\n\r\n", 431),
            ("GET / HTTP/3.0\r\nHost: t\r\n\r\n", 505),
        ]
        for (request, status) in cases {
            let client = try RawClient(server.localAddresses[0])
            try client.send(request)
            #expect(client.readToEnd())
            #expect(client.responses.first?.status == status)
        }
    }

    @Test("Slowloris: a head never finished is answered 408 and closed after the handshake timeout")
    func slowloris() throws {
        let server = try makeServer { $0.handshakeTimeout = .milliseconds(300) }
        defer { server.shutdown() }
        let client = try RawClient(server.localAddresses[0])
        try client.send("GET / HTTP/1.1\r\nHost: t\r\n")
        // Keep trickling header bytes: they must not extend the deadline.
        for index in 0..<100 where !client.sawEndOfStream {
            try? client.send("X-\(index): y\r\n")
            client.read(timeout: .milliseconds(20)) { _ in false }
        }
        #expect(client.readToEnd())
        #expect(client.responses.first?.status == 408)
        #expect(server.statistics.timeouts >= 1)
    }

    @Test("Idle keep-alive connection is closed after the idle timeout")
    func idleTimeout() throws {
        let server = try makeServer { $0.idleTimeout = .milliseconds(300) }
        defer { server.shutdown() }
        let client = try RawClient(server.localAddresses[0])
        try client.send("GET /once HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(client.read { TestResponse.split($0).count == 1 })
        #expect(client.readToEnd())
        #expect(client.responses.count == 1)
    }

    @Test("A connection that never sends is closed after the handshake timeout")
    func silentConnection() throws {
        let server = try makeServer { $0.handshakeTimeout = .milliseconds(200) }
        defer { server.shutdown() }
        let client = try RawClient(server.localAddresses[0])
        #expect(client.readToEnd())
        #expect(client.received.isEmpty)
    }

    @Test("IPv6 loopback and IPv4 loopback on one server")
    func ipv6() throws {
        let server = try makeServer(ipv6: true)
        defer { server.shutdown() }
        #expect(server.localAddresses.count == 2)
        for address in server.localAddresses {
            let client = try RawClient(address)
            try client.send("GET /v HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            #expect(client.readToEnd())
            #expect(client.responses.first?.body == "GET /v 0")
        }
    }

    @Test("Over maxConnections a new connection gets 503; the others keep working")
    func maxConnections() throws {
        let server = try makeServer { $0.maxConnections = 2 }
        defer { server.shutdown() }
        let first = try RawClient(server.localAddresses[0])
        let second = try RawClient(server.localAddresses[0])
        #expect(waitUntil { server.connectionCount == 2 })
        let third = try RawClient(server.localAddresses[0])
        #expect(third.readToEnd())
        #expect(third.responses.first?.status == 503)
        try first.send("GET /a HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(first.read { TestResponse.split($0).count == 1 })
        _ = second
    }

    @Test("A misbehaving client (random bytes, slow head) does not stop others being served")
    func isolation() throws {
        let server = try makeServer { $0.handshakeTimeout = .seconds(5) }
        defer { server.shutdown() }
        let slow = try RawClient(server.localAddresses[0])
        try slow.send("GET / HTTP/1.1\r\nHo")
        let garbage = try RawClient(server.localAddresses[0])
        try garbage.send((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 1) })
        let good = try RawClient(server.localAddresses[0])
        for index in 0..<10 {
            try good.send("GET /g\(index) HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(good.read { TestResponse.split($0).count == index + 1 })
        }
        #expect(garbage.readToEnd())
        #expect(garbage.responses.first?.status == 400)
        #expect(!slow.sawEndOfStream)
    }

    @Test("Deferred handler: answers from another thread keep pipelined responses in order")
    func deferredResponses() throws {
        let configuration = EdgeConfiguration(listenAddresses: [.ipv4Loopback(port: 0)], loopCount: 2)
        let handlers = EdgeHandlers(deferredHTTP: { request, _, responder in
            // Answer on a fresh thread after a pause that depends on the path, so a
            // reordering would show.
            let delay: UInt32 = request.path.hasSuffix("0") ? 20_000 : 1_000
            _ = try? startThread {
                usleep(delay)
                responder.respond(.text(status: 200, "late \(request.path)"))
                responder.respond(.text(status: 500, "second answer is ignored"))
            }
        })
        let server = try EdgeServer(configuration: configuration, handlers: handlers)
        defer { server.shutdown() }
        let client = try RawClient(server.localAddresses[0])
        try client.send((0..<6).map { "GET /d\($0) HTTP/1.1\r\nHost: t\r\n\r\n" }.joined())
        #expect(client.read { TestResponse.split($0).count == 6 })
        #expect(client.responses.map(\.body) == (0..<6).map { "late /d\($0)" })
    }

    @Test("RFC 9110 §10.1.1: Expect: 100-continue gets 100 Continue before the body is sent")
    func expectContinue() throws {
        let server = try makeServer()
        defer { server.shutdown() }
        let client = try RawClient(server.localAddresses[0])
        try client.send("POST /e HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        #expect(client.read { String(decoding: $0, as: UTF8.self).hasPrefix("HTTP/1.1 100 Continue\r\n\r\n") })
        try client.send("body")
        #expect(client.read { String(decoding: $0, as: UTF8.self).hasSuffix("POST /e 4") })
    }
}
