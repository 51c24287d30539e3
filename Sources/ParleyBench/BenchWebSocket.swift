import ParleyWebSocket

/// WebSocket throughput on what the signaling channel carries: a 300-byte JSON text
/// message from a client (masked) and its reassembly by the server connection, a 64 KiB
/// binary frame for raw unmasking speed, and the opening handshake a browser sends.
func webSocketBenchmarks() -> [Benchmark] {
    let json = #"{"type":"call.offer","callId":"6f1c2a9e-4b7d-4e35-9a0c-2d8f51e7b3a4","from":"alice","to":"bob","#
        + #""sdp":"v=0\r\no=- 4611731400430051336 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=group:BUNDLE 0\r\n","#
        + #""headers":{"x-app":"demo"},"ts":1764424224123}"#
    let key = WebSocketMaskingKey(0x1d, 0x2e, 0x3f, 0x40)
    let textFrame = WebSocketFrame.text(json, maskingKey: key)
    let textBytes = textFrame.serialized()
    let binaryFrame = WebSocketFrame.binary((0..<65536).map { UInt8(truncatingIfNeeded: $0) }, maskingKey: key)
    let binaryBytes = binaryFrame.serialized()

    let request = Array("""
        GET /v1/socket?instance=7c1e HTTP/1.1\r
        Host: parley.example.com\r
        Connection: Upgrade\r
        Pragma: no-cache\r
        Cache-Control: no-cache\r
        User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36\r
        Upgrade: websocket\r
        Origin: https://app.example.com\r
        Sec-WebSocket-Version: 13\r
        Accept-Encoding: gzip, deflate, br, zstd\r
        Accept-Language: en-US,en;q=0.9\r
        Sec-WebSocket-Key: x3JJHMbDL1EzLkh9GBhXDw==\r
        Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r
        Sec-WebSocket-Protocol: parley.v1\r
        \r

        """.utf8)
    // A fixed, valid request: parsing it cannot fail.
    let parsedRequest = try! WebSocketUpgradeRequest.parse(request)
    let responseCount = try! WebSocketUpgradeResponse.accepting(parsedRequest, subprotocol: "parley.v1").serialized().count

    return [
        Benchmark(format: "ws", operation: "parse masked text frame", messageBytes: textBytes.count) {
            var parser = WebSocketFrameParser(configuration: .server())
            parser.append(textBytes)
            if let frame = try? parser.nextFrame() { benchmarkSink &+= frame.payload.count }
        },
        Benchmark(format: "ws", operation: "serialize masked text frame", messageBytes: textBytes.count) {
            benchmarkSink &+= textFrame.serialized().count
        },
        Benchmark(format: "ws", operation: "connection: receive text message", messageBytes: textBytes.count) {
            var connection = WebSocketConnection(configuration: .init(role: .server))
            if case .text(let text)? = connection.receive(textBytes).first { benchmarkSink &+= text.utf8.count }
        },
        Benchmark(format: "ws", operation: "parse masked 64 KiB binary frame", messageBytes: binaryBytes.count) {
            if let frame = try? WebSocketFrame.parse(binaryBytes, configuration: .server()) { benchmarkSink &+= frame.payload.count }
        },
        Benchmark(format: "ws", operation: "serialize masked 64 KiB binary frame", messageBytes: binaryBytes.count) {
            benchmarkSink &+= binaryFrame.serialized().count
        },
        Benchmark(format: "ws", operation: "parse browser upgrade request", messageBytes: request.count) {
            if let parsed = try? WebSocketUpgradeRequest.parse(request) { benchmarkSink &+= parsed.headers.fields.count }
        },
        Benchmark(format: "ws", operation: "build + serialize 101 (SHA-1)", messageBytes: responseCount) {
            if let response = try? WebSocketUpgradeResponse.accepting(parsedRequest, subprotocol: "parley.v1") {
                benchmarkSink &+= response.serialized().count
            }
        },
    ]
}
