/// The transport a SIP message travels over (RFC 3261 §18): what a Via's sent-protocol
/// names, and what `SIPTransportServer` listens and sends on. TLS comes later.
public enum SIPTransport: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Datagrams: one message per datagram (§18.3).
    case udp
    /// A byte stream framed by Content-Length (§18.3).
    case tcp

    /// The token of a Via's sent-protocol: `UDP`, `TCP`.
    public var viaToken: String { rawValue.uppercased() }

    public var description: String { rawValue }
}
