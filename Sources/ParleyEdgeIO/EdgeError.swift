public import ParleyNetCore
public import ParleyCrypto

/// Every failure starting an `EdgeServer` reports: a listen address that cannot be bound,
/// a configuration that cannot work, or a TLS certificate or key that cannot be loaded.
/// (The `WebSocketClient`'s failures are `WebSocketClientError`, in ParleyWebSocketClientIO.)
public struct EdgeError: Error, Sendable, CustomStringConvertible {
    private enum Code: Sendable {
        case network(NetError)
        case invalidArgument(String)
        case tls(CryptoError)
    }

    private let code: Code
    private init(_ code: Code) { self.code = code }

    static func network(_ error: NetError) -> EdgeError { EdgeError(.network(error)) }
    static func invalidArgument(_ what: String) -> EdgeError { EdgeError(.invalidArgument(what)) }
    static func tls(_ error: CryptoError) -> EdgeError { EdgeError(.tls(error)) }

    /// The TLS error, if a certificate chain or key could not be loaded.
    public var tlsError: CryptoError? {
        if case .tls(let error) = code { return error }
        return nil
    }

    /// The socket error underneath (e.g. the address is in use), if that is what failed.
    public var networkError: NetError? {
        if case .network(let error) = code { return error }
        return nil
    }

    public var description: String {
        switch code {
        case .network(let error): return "network: \(error)"
        case .invalidArgument(let what): return "invalid argument: \(what)"
        case .tls(let error): return "TLS: \(error)"
        }
    }
}
