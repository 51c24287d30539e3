@testable import ParleyWebSocket
import ParleyWireCore
import ParleyTestSupport

/// The key of the RFC 6455 §5.7 examples.
let rfcKey = WebSocketMaskingKey(0x37, 0xfa, 0x21, 0x3d)

func hex(_ text: String) -> [UInt8] {
    do { return try Hex.decode(text) } catch { fatalError("bad hex in test: \(error)") }
}

/// A frame as a client sends it (masked with the RFC key), for server-role tests.
func clientFrame(_ opcode: WebSocketOpcode, _ payload: [UInt8] = [], fin: Bool = true, rsv: UInt8 = 0) -> [UInt8] {
    WebSocketFrame(fin: fin, rsv1: rsv & 4 != 0, rsv2: rsv & 2 != 0, rsv3: rsv & 1 != 0,
                   opcode: opcode, maskingKey: rfcKey, payload: payload).serialized()
}

func clientFrame(_ opcode: WebSocketOpcode, _ text: String, fin: Bool = true, rsv: UInt8 = 0) -> [UInt8] {
    clientFrame(opcode, Array(text.utf8), fin: fin, rsv: rsv)
}

func opcode(_ raw: UInt8) -> WebSocketOpcode {
    guard let value = WebSocketOpcode(rawValue: raw) else { fatalError("opcode out of range") }
    return value
}

/// Events as short strings, so expectations read as a script.
func describe(_ events: [WebSocketEvent]) -> [String] {
    events.map { event in
        switch event {
        case .text(let text): return "text:\(text)"
        case .binary(let bytes): return "binary:\(Hex.encode(bytes))"
        case .pong(let bytes): return "pong:\(Hex.encode(bytes))"
        case .sendPong(let bytes): return "sendPong:\(Hex.encode(bytes))"
        case .sendClose(let close): return "sendClose:\(close.code.map { String($0.rawValue) } ?? "none")"
        case .closed(let close): return "closed:\(close.code.map { String($0.rawValue) } ?? "none"):\(close.reason)"
        case .failConnection(let error): return "fail:\(error.closeCode.rawValue):\(error.kind)"
        }
    }
}

/// Feeds `bytes` to a fresh connection in chunks of `chunkSize` (0 = all at once).
func run(_ bytes: [UInt8], role: WebSocketRole = .server, chunkSize: Int = 0,
         maxFrameSize: Int = 1 << 20, maxMessageSize: Int = 1 << 20) -> [WebSocketEvent] {
    var connection = WebSocketConnection(configuration: .init(role: role, maxFrameSize: maxFrameSize, maxMessageSize: maxMessageSize))
    guard chunkSize > 0 else { return connection.receive(bytes) }
    var events: [WebSocketEvent] = []
    var index = 0
    while index < bytes.count {
        let end = min(index + chunkSize, bytes.count)
        events += connection.receive(bytes[index..<end])
        index = end
    }
    return events
}

/// Runs a server connection whole, one byte at a time and in 3-byte chunks; all three
/// must agree. Returns the described events.
func script(_ bytes: [UInt8], role: WebSocketRole = .server, maxMessageSize: Int = 1 << 20) -> [String] {
    let whole = run(bytes, role: role, maxMessageSize: maxMessageSize)
    let single = run(bytes, role: role, chunkSize: 1, maxMessageSize: maxMessageSize)
    let triple = run(bytes, role: role, chunkSize: 3, maxMessageSize: maxMessageSize)
    if whole != single || whole != triple {
        return ["chunking changed the events:", "\(describe(whole))", "\(describe(single))", "\(describe(triple))"]
    }
    return describe(whole)
}

/// A connection in a box, so tests can call its mutating methods inside `#expect`.
final class Peer {
    private var connection: WebSocketConnection
    init(configuration: WebSocketConnection.Configuration) { connection = WebSocketConnection(configuration: configuration) }
    var state: WebSocketConnection.State { connection.state }
    var canSendMessages: Bool { connection.canSendMessages }
    func receive(_ bytes: some Sequence<UInt8>) -> [WebSocketEvent] { connection.receive(bytes) }
    func receiveEndOfStream() -> [WebSocketEvent] { connection.receiveEndOfStream() }
    func beginClosing() -> Bool { connection.beginClosing() }
    func fail() -> Bool { connection.fail() }
}
