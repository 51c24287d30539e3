import Foundation
import ParleyNetCore
import ParleyNetLinux

/// A WebSocket client that writes frames byte by byte as the test says, right or wrong,
/// and reads the server's frames without judging them: the conformance tests' probe.
/// It shares no code with ParleyWebSocket, so a bug there cannot hide itself.
final class RawWebSocketPeer {
    struct Frame: Equatable, CustomStringConvertible {
        var fin: Bool
        var opcode: UInt8
        var payload: [UInt8]
        /// Server frames must not be masked (RFC 6455 §5.1).
        var masked = false

        var text: String { String(decoding: payload, as: UTF8.self) }
        /// The close code of a close frame, nil when it has no code.
        var closeCode: UInt16? {
            guard opcode == 0x8, payload.count >= 2 else { return nil }
            return UInt16(payload[0]) << 8 | UInt16(payload[1])
        }
        var description: String {
            opcode == 0x8 ? "close(\(closeCode.map(String.init) ?? "none"))" : "op\(opcode) fin=\(fin) \(payload.count) B \(text.prefix(120))"
        }
    }

    enum Failure: Error, CustomStringConvertible {
        case handshake(String)
        case timeout(String)
        var description: String {
            switch self {
            case .handshake(let text): "handshake refused: \(text)"
            case .timeout(let what): "timed out waiting for \(what)"
            }
        }
    }

    let socket: TCPSocket
    private var buffer: [UInt8] = []
    private(set) var endOfStream = false

    /// Connects and completes the opening handshake (subprotocol `parley.v1` offered unless
    /// `subprotocol` is nil). Throws with the status line and body if the server does not
    /// answer 101.
    init(_ address: SocketAddress, path: String = "/v1/ws", subprotocol: String? = "parley.v1") throws {
        socket = try TCPSocket.connect(to: address, timeout: .seconds(5))
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        var request = "GET \(path) HTTP/1.1\r\nHost: \(address)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        if let subprotocol { request += "Sec-WebSocket-Protocol: \(subprotocol)\r\n" }
        request += "\r\n"
        try writeAll(Array(request.utf8))
        let head = try readHead()
        guard head.hasPrefix("HTTP/1.1 101") else { throw Failure.handshake(head + String(decoding: buffer, as: UTF8.self)) }
    }

    deinit { socket.close() }

    // MARK: Writing

    /// Sends one frame. Client frames are masked unless `masked` is false; `rsv` sets
    /// RSV1-3 (bits 0x40, 0x20, 0x10 of the first byte).
    func send(opcode: UInt8, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0, masked: Bool = true) throws {
        try writeAll(Self.frame(opcode: opcode, payload, fin: fin, rsv: rsv, masked: masked))
    }

    func sendText(_ text: String, fin: Bool = true) throws { try send(opcode: 0x1, Array(text.utf8), fin: fin) }

    /// A close frame with `code` and `reason` bytes (no payload when `code` is nil).
    func sendClose(code: UInt16?, reason: [UInt8] = []) throws {
        var payload: [UInt8] = []
        if let code { payload = [UInt8(code >> 8), UInt8(code & 0xFF)] + reason }
        try send(opcode: 0x8, payload)
    }

    static func frame(opcode: UInt8, _ payload: [UInt8], fin: Bool, rsv: UInt8, masked: Bool) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | (rsv & 0x70) | (opcode & 0x0F)]
        let maskBit: UInt8 = masked ? 0x80 : 0
        switch payload.count {
        case 0...125: bytes.append(maskBit | UInt8(payload.count))
        case 126...0xFFFF: bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default:
            bytes.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: payload.count >> shift)) }
        }
        if masked {
            let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
            bytes += mask
            bytes += payload.enumerated().map { $0.element ^ mask[$0.offset & 3] }
        } else {
            bytes += payload
        }
        return bytes
    }

    func writeAll(_ bytes: [UInt8]) throws {
        var offset = 0
        let deadline = ContinuousClock.now + .seconds(10)
        while offset < bytes.count {
            offset += try socket.write(bytes, from: offset)
            if offset < bytes.count {
                guard ContinuousClock.now < deadline else { throw Failure.timeout("the socket to take \(bytes.count) bytes") }
                _ = socket.waitUntilWritable(timeout: .milliseconds(200))
            }
        }
    }

    // MARK: Reading

    /// The next frame from the server, or nil when the connection ended or `timeout` passed.
    func nextFrame(timeout: Duration = .seconds(5)) -> Frame? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let frame = parseFrame() { return frame }
            if endOfStream || ContinuousClock.now >= deadline { return nil }
            fill(until: deadline)
        }
    }

    /// Skips frames until one satisfies `match`; nil if none arrives in time.
    func frame(timeout: Duration = .seconds(5), where match: (Frame) -> Bool) -> Frame? {
        let deadline = ContinuousClock.now + timeout
        while let frame = nextFrame(timeout: deadline - ContinuousClock.now) {
            if match(frame) { return frame }
        }
        return nil
    }

    /// Waits for the server's close frame (skipping others); nil if none came in time.
    func closeFrame(timeout: Duration = .seconds(5)) -> Frame? { frame(timeout: timeout) { $0.opcode == 0x8 } }

    /// True when the server closed the TCP connection within `timeout` (after its close frame).
    func waitForEndOfStream(timeout: Duration = .seconds(5)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !endOfStream && ContinuousClock.now < deadline {
            buffer.removeAll()
            fill(until: deadline)
        }
        return endOfStream
    }

    private func fill(until deadline: ContinuousClock.Instant) {
        let wait = min(deadline - ContinuousClock.now, .milliseconds(100))
        guard wait > .zero, socket.waitUntilReadable(timeout: wait) else { return }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        do {
            switch try socket.read(into: &chunk) {
            case .bytes(let count): buffer += chunk[0..<count]
            case .wouldBlock: break
            case .endOfStream: endOfStream = true
            }
        } catch {
            endOfStream = true
        }
    }

    private func readHead() throws -> String {
        let deadline = ContinuousClock.now + .seconds(5)
        let end: [UInt8] = [13, 10, 13, 10]
        while true {
            if let range = firstRange(of: end) {
                let head = String(decoding: buffer[..<range], as: UTF8.self)
                buffer.removeFirst(range + 4)
                return head
            }
            if endOfStream { throw Failure.handshake(String(decoding: buffer, as: UTF8.self)) }
            guard ContinuousClock.now < deadline else { throw Failure.timeout("the handshake response") }
            fill(until: deadline)
        }
    }

    private func firstRange(of needle: [UInt8]) -> Int? {
        guard buffer.count >= needle.count else { return nil }
        for start in 0...(buffer.count - needle.count) where Array(buffer[start..<start + needle.count]) == needle {
            return start
        }
        return nil
    }

    private func parseFrame() -> Frame? {
        guard buffer.count >= 2 else { return nil }
        var length = Int(buffer[1] & 0x7F)
        var offset = 2
        if length == 126 {
            guard buffer.count >= 4 else { return nil }
            length = Int(buffer[2]) << 8 | Int(buffer[3])
            offset = 4
        } else if length == 127 {
            guard buffer.count >= 10 else { return nil }
            length = buffer[2..<10].reduce(0) { $0 << 8 | Int($1) }
            offset = 10
        }
        let masked = buffer[1] & 0x80 != 0
        let mask = masked ? Array(buffer[offset..<min(offset + 4, buffer.count)]) : []
        if masked { offset += 4 }
        guard buffer.count >= offset + length else { return nil }
        var payload = Array(buffer[offset..<offset + length])
        if masked { payload = payload.enumerated().map { $0.element ^ mask[$0.offset & 3] } }
        let frame = Frame(fin: buffer[0] & 0x80 != 0, opcode: buffer[0] & 0x0F, payload: payload, masked: masked)
        buffer.removeFirst(offset + length)
        return frame
    }
}
