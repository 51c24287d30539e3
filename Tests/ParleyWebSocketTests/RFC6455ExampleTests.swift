import Testing
@testable import ParleyWebSocket

/// The worked examples of RFC 6455, byte for byte.
@Suite("RFC 6455 examples") struct RFC6455ExampleTests {
    @Test("RFC 6455 § 5.7: single-frame unmasked text \"Hello\"")
    func unmaskedText() throws {
        let wire = hex("81 05 48 65 6c 6c 6f")
        let frame = try WebSocketFrame.parse(wire, configuration: .client())
        #expect(frame == WebSocketFrame.text("Hello"))
        #expect(frame.serialized() == wire)
        #expect(describe(run(wire, role: .client)) == ["text:Hello"])
    }

    @Test("RFC 6455 § 5.7: single-frame masked text \"Hello\"")
    func maskedText() throws {
        let wire = hex("81 85 37 fa 21 3d 7f 9f 4d 51 58")
        let frame = try WebSocketFrame.parse(wire, configuration: .server())
        #expect(frame == WebSocketFrame.text("Hello", maskingKey: rfcKey))
        #expect(frame.payload == Array("Hello".utf8))
        #expect(frame.serialized() == wire)
        #expect(describe(run(wire, role: .server)) == ["text:Hello"])
    }

    @Test("RFC 6455 § 5.7: fragmented unmasked text \"Hel\" + \"lo\"")
    func fragmentedText() throws {
        let first = hex("01 03 48 65 6c")
        let second = hex("80 02 6c 6f")
        let frames = try WebSocketFrame.parseAll(first + second, configuration: .client())
        #expect(frames == [WebSocketFrame(fin: false, opcode: .text, payload: Array("Hel".utf8)),
                           WebSocketFrame(fin: true, opcode: .continuation, payload: Array("lo".utf8))])
        #expect(frames[0].serialized() == first)
        #expect(frames[1].serialized() == second)
        #expect(script(first + second, role: .client) == ["text:Hello"])
    }

    @Test("RFC 6455 § 5.7: unmasked ping \"Hello\" and masked pong \"Hello\"")
    func pingAndPong() throws {
        let ping = hex("89 05 48 65 6c 6c 6f")
        let pong = hex("8a 85 37 fa 21 3d 7f 9f 4d 51 58")
        #expect(try WebSocketFrame.parse(ping, configuration: .client()) == .ping(Array("Hello".utf8)))
        #expect(try WebSocketFrame.parse(pong, configuration: .server()) == .pong(Array("Hello".utf8), maskingKey: rfcKey))
        #expect(WebSocketFrame.ping(Array("Hello".utf8)).serialized() == ping)
        // The client answers the server's ping with exactly the RFC's masked pong.
        let events = run(ping, role: .client)
        #expect(events == [.sendPong(Array("Hello".utf8))])
        #expect(WebSocketFrame.pong(Array("Hello".utf8), maskingKey: rfcKey).serialized() == pong)
        #expect(run(pong, role: .server) == [.pong(Array("Hello".utf8))])
    }

    @Test("RFC 6455 § 5.7: 256-byte binary with 16-bit length")
    func binary256() throws {
        let payload = (0..<256).map { UInt8(truncatingIfNeeded: $0) }
        let wire = hex("82 7e 01 00") + payload
        let frame = try WebSocketFrame.parse(wire, configuration: .client())
        #expect(frame == .binary(payload))
        #expect(frame.serialized() == wire)
        #expect(run(wire, role: .client) == [.binary(payload)])
    }

    @Test("RFC 6455 § 5.7: 64 KiB binary with 64-bit length")
    func binary64K() throws {
        let payload = (0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let wire = hex("82 7f 00 00 00 00 00 01 00 00") + payload
        let frame = try WebSocketFrame.parse(wire, configuration: .client())
        #expect(frame == .binary(payload))
        #expect(frame.serialized() == wire)
        #expect(frame.serializedCount == wire.count)
        #expect(run(wire, role: .client) == [.binary(payload)])
        #expect(run(wire, role: .client, chunkSize: 1000) == [.binary(payload)])
    }

    /// RFC 6455 § 1.3 gives s3pPLMBiTxaQ9kYGzzhZRbK+xOo= (SHA-1 b37a4f2c c0624f16 90f64606
    /// cf385945 b2bec4ea); that is the value any other SHA-1 and base64 produce too.
    @Test("RFC 6455 § 1.3: Sec-WebSocket-Accept for the sample nonce")
    func acceptValue() throws {
        #expect(try WebSocketKey.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        let key = try #require(WebSocketKey(base64: "dGhlIHNhbXBsZSBub25jZQ=="))
        #expect(key.bytes == Array("the sample nonce".utf8))
        #expect(try key.acceptValue() == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    static let requestText = """
        GET /chat HTTP/1.1\r
        Host: server.example.com\r
        Upgrade: websocket\r
        Connection: Upgrade\r
        Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r
        Origin: http://example.com\r
        Sec-WebSocket-Protocol: chat, superchat\r
        Sec-WebSocket-Version: 13\r
        \r

        """

    @Test("RFC 6455 § 1.2: the sample opening handshake, server side")
    func sampleHandshakeServer() throws {
        let request = try WebSocketUpgradeRequest.parse(Array(Self.requestText.utf8))
        #expect(request.method == "GET")
        #expect(request.path == "/chat")
        #expect(request.query == nil)
        #expect(request.host == "server.example.com")
        #expect(request.key == "dGhlIHNhbXBsZSBub25jZQ==")
        #expect(request.origin == "http://example.com")
        #expect(request.subprotocols == ["chat", "superchat"])
        #expect(request.extensions == [])
        #expect(request.serialized() == Array(Self.requestText.utf8))

        let response = try WebSocketUpgradeResponse.accepting(request, subprotocol: "chat")
        let expected = """
            HTTP/1.1 101 Switching Protocols\r
            Upgrade: websocket\r
            Connection: Upgrade\r
            Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r
            Sec-WebSocket-Protocol: chat\r
            \r

            """
        #expect(String(decoding: response.serialized(), as: UTF8.self) == expected)
    }

    @Test("RFC 6455 § 1.2: the sample opening handshake, client side")
    func sampleHandshakeClient() throws {
        let key = try #require(WebSocketKey(nonce: Array("the sample nonce".utf8)))
        let request = try WebSocketUpgradeRequest(target: "/chat", host: "server.example.com", key: key,
                                                  subprotocols: ["chat", "superchat"], origin: "http://example.com")
        #expect(try WebSocketUpgradeRequest.parse(request.serialized()) == request)
        let responseBytes = Array("""
            HTTP/1.1 101 Switching Protocols\r
            Upgrade: websocket\r
            Connection: Upgrade\r
            Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r
            Sec-WebSocket-Protocol: chat\r
            \r

            """.utf8)
        let response = try WebSocketUpgradeResponse.parse(responseBytes)
        #expect(response.status == 101)
        #expect(response.accept == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(try response.validate(for: request) == "chat")
        #expect(response.serialized() == responseBytes)
    }
}
