/// The transport a SIP message travels over (RFC 3261 §18): what a Via's sent-protocol
/// names, and what `SIPTransportServer` listens and sends on.
public enum SIPTransport: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Datagrams: one message per datagram (§18.3).
    case udp
    /// A byte stream framed by Content-Length (§18.3).
    case tcp
    /// TCP under TLS (§26.2): the decrypted stream framed as over TCP; the `sips:`
    /// scheme and `transport=tls` ask for it, on port 5061 by default (§19.1.2).
    case tls

    /// The token of a Via's sent-protocol: `UDP`, `TCP`, `TLS`.
    public var viaToken: String { rawValue.uppercased() }

    /// Whether the transport is a connection (TCP, TLS) rather than datagrams.
    public var isStream: Bool { self != .udp }

    /// The port a Via or URI that names none means: 5061 for TLS, else 5060 (§19.1.2).
    public var defaultPort: UInt16 { self == .tls ? 5061 : 5060 }

    public var description: String { rawValue }
}
