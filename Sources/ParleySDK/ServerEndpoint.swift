import Foundation
import ParleyNetCore
import ParleySignaling
#if canImport(Glibc)
import Glibc
#endif

/// Where the SDK connects: `http://host[:port]` becomes `ws://host:port/v1/ws`.
struct ServerEndpoint: Sendable, Hashable {
    var host: String
    var port: UInt16
    var isSecure: Bool
    var path: String { SignalingCodec.path }
    /// The `Host` header value.
    var hostHeader: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    /// The WebSocket URL, for logs and errors.
    var webSocketURL: String { "\(isSecure ? "wss" : "ws")://\(hostHeader)\(path)" }

    /// Parses the environment host given to `ParleyClient`.
    init(parsing text: String) throws(ParleyClientError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              let host = components.host, !host.isEmpty else {
            throw ParleyClientError(code: "invalid_argument", message: "environment host \"\(text)\" is not a URL like http://127.0.0.1:8080")
        }
        guard scheme == "http" || scheme == "https" || scheme == "ws" || scheme == "wss" else {
            throw ParleyClientError(code: "invalid_argument", message: "environment host \"\(text)\": scheme must be http or https")
        }
        guard components.path.isEmpty || components.path == "/", components.query == nil, components.user == nil else {
            throw ParleyClientError(code: "invalid_argument", message: "environment host \"\(text)\" must be scheme://host:port only (the SDK adds \(SignalingCodec.path))")
        }
        isSecure = scheme == "https" || scheme == "wss"
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if let port = components.port {
            guard (1...65535).contains(port) else { throw ParleyClientError(code: "invalid_argument", message: "port \(port) out of range") }
            self.port = UInt16(port)
        } else {
            port = isSecure ? 443 : 80
        }
    }

    /// The server's address: an IP literal as it is, `localhost` as 127.0.0.1, other
    /// names through the system resolver (first address).
    func resolve() throws(ParleyClientError) -> SocketAddress {
        if let literal = SocketAddress(host: host, port: port) { return literal }
        if host.lowercased() == "localhost" { return .ipv4Loopback(port: port) }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let first = result else {
            throw ParleyClientError(code: "server_unreachable", message: "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(result) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let raw = current.pointee.ai_addr {
                if current.pointee.ai_family == AF_INET {
                    let bytes = raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { withUnsafeBytes(of: $0.pointee.sin_addr) { Array($0) } }
                    if let address = SocketAddress(hostBytes: bytes, port: port) { return address }
                } else if current.pointee.ai_family == AF_INET6 {
                    let bytes = raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { withUnsafeBytes(of: $0.pointee.sin6_addr) { Array($0) } }
                    if let address = SocketAddress(hostBytes: bytes, port: port) { return address }
                }
            }
            entry = current.pointee.ai_next
        }
        throw ParleyClientError(code: "server_unreachable", message: "no address for \(host)")
    }
}
