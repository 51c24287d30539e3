import Foundation
import ParleySignaling

/// Where the SDK connects: `http://host[:port]` becomes `ws://host:port/v1/ws`.
public struct ParleyServerEndpoint: Sendable, Hashable {
    /// The host name or IP address (without brackets).
    public var host: String
    /// The TCP port.
    public var port: UInt16
    /// Whether the connection uses TLS (`https://`, `wss://`).
    public var isSecure: Bool
    /// The environment host as the app gave it.
    public var environmentHost: String
    /// The signaling path on the server.
    public var path: String { SignalingCodec.path }
    /// The `Host` header value.
    public var hostHeader: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    /// The WebSocket URL (`ws://` or `wss://`).
    public var webSocketURL: String { "\(isSecure ? "wss" : "ws")://\(hostHeader)\(path)" }
    /// The subprotocol the connection must ask for and the server must select.
    public static var subprotocol: String { SignalingCodec.subprotocol }

    /// Parses the environment host given to `ParleyClient`.
    /// - Throws: `ParleyClientError` `invalid_argument` for anything but `scheme://host[:port]`.
    public init(parsing text: String) throws(ParleyClientError) {
        environmentHost = text
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
}
