public import ParleyCrypto
public import ParleyNetCore

/// Why a `SIPTransportServer` could not start: a socket it could not bind, or the TLS
/// certificate, key or CA file it could not use.
public enum SIPTransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Binding or the event loop failed (e.g. the address is in use).
    case network(NetError)
    /// The TLS configuration cannot be used (a missing file, a key that does not match).
    case tls(CryptoError)

    public var description: String {
        switch self {
        case .network(let error): "SIP transport: \(error)"
        case .tls(let error): "SIP over TLS: \(error)"
        }
    }
}
