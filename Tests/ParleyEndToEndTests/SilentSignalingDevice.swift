import Foundation

/// A device that signs in over a plain WebSocket and then says nothing more: it never
/// sends `call.ack`, which no SDK device does, so a call to it can end as `noAnswer`.
/// Written from docs/protocol.md (handshake with `parley.v1`, one masked text frame for
/// `hello`); it reads nothing but the bytes up to `hello.ok`.
final class SilentSignalingDevice {
    private let descriptor: Int32

    /// Connects to `127.0.0.1:port` and signs in with `token` (mint it with `parley token`).
    init(port: UInt16, applicationKey: String, token: String, deviceID: String, timeout: Double = 10) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ManagedProcess.Failure(description: "socket() failed: errno \(errno)") }
        var receiveTimeout = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &receiveTimeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            close(descriptor)
            throw ManagedProcess.Failure(description: "connect to 127.0.0.1:\(port) failed: errno \(errno)")
        }
        do {
            try send(Array((
                "GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                    + "Sec-WebSocket-Protocol: parley.v1\r\n\r\n").utf8))
            try readUntil("\r\n\r\n", timeout: timeout, expecting: "101")
            let hello = #"{"v":1,"type":"hello","id":"1","appKey":"\#(applicationKey)","token":"\#(token)","deviceId":"\#(deviceID)","sdk":{"name":"e2e-silent-device","version":"1"}}"#
            try send(Self.maskedTextFrame(Array(hello.utf8)))
            try readUntil("hello.ok", timeout: timeout, expecting: nil)
        } catch {
            close(descriptor)
            throw error
        }
    }

    deinit { close(descriptor) }

    /// Sends one JSON text message and reads until `marker` (e.g. a reply's `"result"`).
    func request(_ json: String, until marker: String, timeout: Double = 10) throws {
        try send(Self.maskedTextFrame(Array(json.utf8)))
        try readUntil(marker, timeout: timeout, expecting: nil)
    }

    /// Sends every message in one write, back to back, as a burst.
    func sendBurst(_ messages: [String]) throws {
        try send(messages.flatMap { Self.maskedTextFrame(Array($0.utf8)) })
    }

    /// Reads server frames (unmasked text, RFC 6455 §5.2) until a reply (`re`) to every id in
    /// `ids` came, or `timeout`; returns each reply's `type` by id (what came in time).
    func readReplies(to ids: Set<String>, timeout: Double) throws -> [String: String] {
        let deadline = Date().addingTimeInterval(timeout)
        var replies: [String: String] = [:]
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !ids.isSubset(of: Set(replies.keys)), Date() < deadline {
            while let (payload, used) = Self.nextServerFrame(pending) {
                pending.removeFirst(used)
                if let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
                   let re = object["re"] as? String, let type = object["type"] as? String, ids.contains(re) {
                    replies[re] = type
                }
            }
            if ids.isSubset(of: Set(replies.keys)) { break }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) { continue }
            guard count > 0 else { break }
            pending += buffer[..<count]
        }
        return replies
    }

    /// The payload of the first whole frame in `bytes` and the bytes it took, or nil.
    private static func nextServerFrame(_ bytes: [UInt8]) -> ([UInt8], Int)? {
        guard bytes.count >= 2 else { return nil }
        var length = Int(bytes[1] & 0x7F)
        var offset = 2
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = Int(bytes[2]) << 8 | Int(bytes[3])
            offset = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            length = bytes[2..<10].reduce(0) { $0 << 8 | Int($1) }
            offset = 10
        }
        guard bytes.count >= offset + length else { return nil }
        return (Array(bytes[offset..<(offset + length)]), offset + length)
    }

    /// Sends a close frame with 1000, which the server takes as a logout (docs/protocol.md):
    /// the device is offline at once instead of within the reconnect grace.
    func logOut() throws {
        let mask: [UInt8] = [0x11, 0x22, 0x33, 0x44]
        let code: [UInt8] = [0x03, 0xE8]
        try send([0x88, 0x82] + mask + code.enumerated().map { $0.element ^ mask[$0.offset % 4] })
    }

    /// A client-to-server text frame (RFC 6455 §5.2): FIN, opcode 1, masked.
    static func maskedTextFrame(_ payload: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return frame
    }

    private func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw ManagedProcess.Failure(description: "send failed: errno \(errno)") }
            offset += sent
        }
    }

    /// Reads until `marker` appears (bounded in time and size); the text read so far must
    /// contain `expecting` when given.
    private func readUntil(_ marker: String, timeout: Double, expecting: String?) throws {
        let deadline = Date().addingTimeInterval(timeout)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: received, as: UTF8.self).contains(marker) {
            guard Date() < deadline, received.count < 1 << 20 else {
                throw ManagedProcess.Failure(description: "no '\(marker)' from the server; got: \(String(decoding: received.prefix(500), as: UTF8.self))")
            }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            guard count > 0 else {
                throw ManagedProcess.Failure(description: "connection closed before '\(marker)'; got: \(String(decoding: received.prefix(500), as: UTF8.self))")
            }
            received += buffer[..<count]
        }
        if let expecting, !String(decoding: received, as: UTF8.self).contains(expecting) {
            throw ManagedProcess.Failure(description: "expected '\(expecting)', got: \(String(decoding: received.prefix(500), as: UTF8.self))")
        }
    }
}
