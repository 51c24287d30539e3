import ParleyEdgeIO
import ParleyHTTP
import ParleyNetCore
import ParleyNetLinux
import ParleyServer
import Testing

/// The HTTP side of the port: the built-in answers without a REST handler, and the hook.
@Suite struct ServerHTTPTests {
    /// One request with `Connection: close`; returns the raw response text.
    static func request(_ address: SocketAddress, _ head: String) throws -> String {
        let socket = try TCPSocket.connect(to: address, timeout: .seconds(5))
        defer { socket.close() }
        let bytes = Array(head.utf8)
        var offset = 0
        for _ in 0..<1000 where offset < bytes.count {
            offset += try socket.write(bytes, from: offset)
            if offset < bytes.count { _ = socket.waitUntilWritable(timeout: .seconds(1)) }
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + .seconds(5)
        reading: while ContinuousClock.now < deadline {
            guard socket.waitUntilReadable(timeout: deadline - ContinuousClock.now) else { break }
            switch try socket.read(into: &buffer) {
            case .bytes(let count): received += buffer[0..<count]
            case .wouldBlock: continue
            case .endOfStream: break reading
            }
        }
        return String(decoding: received, as: UTF8.self)
    }

    @Test func healthzIsOKAndEverythingElse404JSONWithoutAHandler() throws {
        let harness = try ServerHarness()
        let health = try Self.request(harness.address, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(health.hasPrefix("HTTP/1.1 200"))
        #expect(health.hasSuffix("\r\n\r\nok\n"))
        let missing = try Self.request(harness.address, "GET /v1/calls HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(missing.hasPrefix("HTTP/1.1 404"))
        #expect(missing.contains(#"{"code":"not_found","message":"#))
        // A WebSocket upgrade without parley.v1 is 426 with the protocol's JSON body.
        let upgrade = try Self.request(harness.address, """
            GET /v1/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
            Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n
            """)
        #expect(upgrade.hasPrefix("HTTP/1.1 426"))
        #expect(upgrade.contains(#""code":"unsupported_version""#))
        #expect(upgrade.contains(#""supported":[1]"#))
    }

    @Test func anInstalledHandlerAnswersEveryOtherRequest() throws {
        let harness = try ServerHarness(startsServer: false)
        harness.server.installHTTPHandler { request, _, responder in
            responder.respond(.text(status: 201, "rest \(request.path)\n"))
        }
        try harness.server.start()
        let response = try Self.request(harness.address, "GET /v1/calls HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(response.hasPrefix("HTTP/1.1 201"))
        #expect(response.hasSuffix("rest /v1/calls\n"))
        // The WebSocket route still works next to it.
        let device = try harness.device("alice")
        try device.send(.ping(.init(requestID: "p")))
        #expect(try device.expectMessage().type == .pong)
    }
}
