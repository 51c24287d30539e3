import Foundation
import Glibc

/// The Janus API over Janus's HTTP transport (its REST interface) on a loopback port: one
/// blocking request per TCP connection (`Connection: close`), JSON both ways.
///
/// Requests go to `/janus` (create a session), `/janus/<session>` (attach, keepalive,
/// destroy; `GET` is the long poll for the session's events) and
/// `/janus/<session>/<handle>` (messages to a plugin).
struct JanusHTTPClient {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let port: UInt16
    /// Per request: connect, send and every read wait at most this long.
    let timeoutSeconds: Int

    /// A response is the bench's own Janus answering a handful of requests: anything larger
    /// is not one.
    static let maximumResponseBytes = 4 << 20

    init(port: UInt16, timeoutSeconds: Int = 10) {
        self.port = port
        self.timeoutSeconds = timeoutSeconds
    }

    /// POSTs `body` (a JSON object) to `path`; the JSON object Janus answers with.
    func post(_ path: String, _ body: [String: Any]) throws -> [String: Any] {
        let json = try JSONSerialization.data(withJSONObject: body)
        let head = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(json.count)\r\nConnection: close\r\n\r\n"
        let response = try exchange(Array(head.utf8) + json)
        guard let object = try JSONSerialization.jsonObject(with: Data(response)) as? [String: Any] else {
            throw Failure(description: "Janus answered \(path) with JSON that is not an object")
        }
        return object
    }

    /// GETs `path` (the session's long poll); Janus answers with an array of events when
    /// `maxev` is in the query, or one event.
    func get(_ path: String) throws -> [[String: Any]] {
        let head = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
        let response = try exchange(Array(head.utf8))
        let value = try JSONSerialization.jsonObject(with: Data(response))
        if let events = value as? [[String: Any]] { return events }
        if let event = value as? [String: Any] { return [event] }
        throw Failure(description: "Janus answered \(path) with neither an event nor a list of them")
    }

    /// Sends `request` and returns the body of a 200 response.
    private func exchange(_ request: [UInt8]) throws -> [UInt8] {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = port.bigEndian
        target.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let connected = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "cannot connect to Janus on 127.0.0.1:\(port): \(String(cString: strerror(errno)))") }
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw Failure(description: "sending to Janus: \(String(cString: strerror(errno)))") }
            sent += n
        }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw Failure(description: "reading from Janus: \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            response += chunk[..<n]
            guard response.count <= Self.maximumResponseBytes else {
                throw Failure(description: "Janus's response is over \(Self.maximumResponseBytes) bytes")
            }
        }
        return try Self.body(ofResponse: response)
    }

    /// The body of an HTTP/1.1 200 response read to the end of its connection: the bytes
    /// after the blank line, de-chunked when the response is chunked (libmicrohttpd chunks
    /// Janus's answers even on `Connection: close`), else cut to `Content-Length` when
    /// there is one.
    static func body(ofResponse response: [UInt8]) throws -> [UInt8] {
        guard let end = (0..<max(0, response.count - 3)).first(where: {
            response[$0] == 13 && response[$0 + 1] == 10 && response[$0 + 2] == 13 && response[$0 + 3] == 10
        }) else {
            throw Failure(description: "Janus's response has no end of header (\(response.count) bytes)")
        }
        let head = String(decoding: response[..<end], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let status = lines.first, status.hasPrefix("HTTP/1.1 200") || status.hasPrefix("HTTP/1.0 200") else {
            throw Failure(description: "Janus answered \(lines.first.map(String.init) ?? "nothing")")
        }
        let body = Array(response[(end + 4)...])
        var length: Int?
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let name = parts[0].lowercased(), value = parts[1].trimmingCharacters(in: .whitespaces).lowercased()
            if name == "transfer-encoding" && value.contains("chunked") { return try dechunk(body) }
            if name == "content-length" { length = Int(value) }
        }
        if let length, length >= 0, length < body.count { return Array(body[..<length]) }
        return body
    }

    /// The data of a chunked body (RFC 9112 7.1): hexadecimal size lines (extensions after
    /// `;` ignored), each chunk followed by CRLF, up to the chunk of size 0.
    static func dechunk(_ body: [UInt8]) throws -> [UInt8] {
        var data: [UInt8] = []
        var index = 0
        while true {
            guard let lineEnd = (index..<max(index, body.count - 1)).first(where: { body[$0] == 13 && body[$0 + 1] == 10 }) else {
                throw Failure(description: "a chunked body from Janus ends inside a size line")
            }
            let sizeText = String(decoding: body[index..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0,
                  size <= maximumResponseBytes else {
                throw Failure(description: "a chunked body from Janus has the size line \"\(sizeText)\"")
            }
            index = lineEnd + 2
            if size == 0 { return data }
            guard body.count - index >= size + 2 else { throw Failure(description: "a chunked body from Janus is cut short") }
            data += body[index..<index + size]
            index += size + 2
        }
    }
}
