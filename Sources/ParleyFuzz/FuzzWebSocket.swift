import ParleyWebSocket

/// Feeds one input to every WebSocket parser and checks the invariants that must hold
/// for any bytes:
/// - frames parsed leniently re-serialize to exactly the bytes they came from, and
///   re-parse to the same values;
/// - a connection (server and client role) gives the same events however the input is
///   chunked: whole, one byte at a time and seven at a time (13 and 257 for inputs over
///   1 KiB, to keep the run fast);
/// - a handshake head that parses re-serializes to a head that parses to the same value;
/// - the handshake reader finds the same head whole and byte by byte.
func fuzzWebSocket(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)

    // Frames.
    var parser = WebSocketFrameParser(configuration: .inspecting)
    parser.append(bytes)
    var frames: [WebSocketFrame] = []
    while true {
        guard let frame = try? parser.nextFrame() else { break }
        frames.append(frame)
    }
    var again: [UInt8] = []
    for frame in frames { frame.serialize(into: &again) }
    guard again.elementsEqual(bytes.prefix(again.count)) else { fatalError("frames did not re-serialize to their input bytes") }
    guard (try? WebSocketFrame.parseAll(again)) == frames else { fatalError("re-serialized frames parsed differently") }

    // Connections, chunked three ways.
    let (small, large) = bytes.count <= 1024 ? (1, 7) : (13, 257)
    for role in [WebSocketRole.server, .client] {
        var whole = WebSocketConnection(configuration: .init(role: role, maxFrameSize: 4096, maxMessageSize: 8192))
        let expected = whole.receive(bytes)
        for chunk in [small, large] {
            var chunked = WebSocketConnection(configuration: whole.configuration)
            var events: [WebSocketEvent] = []
            var index = 0
            while index < bytes.count {
                events += chunked.receive(bytes[index..<min(index + chunk, bytes.count)])
                index += chunk
            }
            guard events == expected else { fatalError("\(chunk)-byte chunks changed the events for the \(role) role") }
            guard chunked.state == whole.state else { fatalError("\(chunk)-byte chunks changed the final state") }
        }
    }

    // Handshake heads.
    if let request = try? WebSocketUpgradeRequest.parse(bytes) {
        guard (try? WebSocketUpgradeRequest.parse(request.serialized())) == request else { fatalError("request round trip failed") }
        if let response = try? WebSocketUpgradeResponse.accepting(request) {
            do {
                let parsed = try WebSocketUpgradeResponse.parse(response.serialized())
                guard try parsed.validate(for: request) == nil else { fatalError("our own 101 chose a subprotocol") }
            } catch {
                fatalError("our own 101 did not validate: \(error)")
            }
        }
    }
    if let response = try? WebSocketUpgradeResponse.parse(bytes) {
        guard (try? WebSocketUpgradeResponse.parse(response.serialized())) == response else { fatalError("response round trip failed") }
    }
    var wholeReader = WebSocketHandshakeReader(maxHeadSize: 1024)
    var byteReader = WebSocketHandshakeReader(maxHeadSize: 1024)
    let wholeResult = try? wholeReader.append(bytes)
    var byteResult: WebSocketHandshakeReader.Progress? = .needMoreBytes
    var consumed = 0
    for byte in bytes {
        byteResult = try? byteReader.append(CollectionOfOne(byte))
        consumed += 1
        if byteResult != .needMoreBytes { break }
    }
    switch (wholeResult, byteResult) {
    case (.complete(let head, let remainder)?, .complete(let byteHead, _)?):
        guard head == byteHead, head.count == consumed, head + remainder == bytes else { fatalError("reader split the head differently") }
    case (.needMoreBytes?, .needMoreBytes?), (nil, nil):
        break
    default:
        fatalError("reader disagreed with itself whole and byte by byte")
    }
    _ = try? WebSocketInspection.inspect(bytes)
}
