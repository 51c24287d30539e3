public import ParleySIP

/// A transport address a SIP message is sent to or came from: the transport and the
/// host and port (RFC 3261 §18). Over TCP and TLS it names the connection the shell keeps
/// to that address; a response to a request received over a connection goes back on it.
///
/// The host is normally an IP address. A name is allowed, for a shell that resolves names
/// itself; the cores never resolve anything.
public struct SIPHop: Sendable, Hashable, CustomStringConvertible {
    /// The transport protocols Parley speaks SIP over.
    public enum Transport: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        case udp, tcp, tls

        /// Whether the transport delivers reliably, so the transaction layer does not
        /// retransmit over it (RFC 3261 §17.1.1.2, §17.1.2.2, §17.2.1, §17.2.2).
        public var isReliable: Bool { self != .udp }

        /// The name in a Via's sent-protocol: `UDP`, `TCP`, `TLS`.
        public var viaName: String {
            switch self {
            case .udp: "UDP"
            case .tcp: "TCP"
            case .tls: "TLS"
            }
        }

        /// The transport a Via's sent-protocol or a URI's `transport` parameter names
        /// (compared case-insensitively); nil for another one (SCTP, WS...).
        public init?(name: String) {
            switch SIPText.lowercased(name) {
            case "udp": self = .udp
            case "tcp": self = .tcp
            case "tls": self = .tls
            default: return nil
            }
        }

        /// 5061 for TLS, else 5060 (RFC 3261 §19.1.2).
        public var defaultPort: UInt16 { self == .tls ? 5061 : 5060 }

        public var description: String { rawValue }
    }

    /// The transport.
    public var transport: Transport
    /// The host: an IP address (IPv6 without brackets in `SIPHost.ipv6`), or a name.
    public var host: SIPHost
    /// The port.
    public var port: UInt16

    /// A hop.
    public init(transport: Transport, host: SIPHost, port: UInt16) {
        self.transport = transport
        self.host = host
        self.port = port
    }

    /// Whether `other` is the same address: hosts compared as RFC 3261 §19.1.4 compares
    /// them (names case-insensitively, addresses by value), transports and ports equal.
    public func isSameAddress(as other: SIPHop) -> Bool {
        transport == other.transport && port == other.port && host.isEquivalent(to: other.host)
    }

    /// `udp:192.0.2.1:5060`, `tcp:[2001:db8::1]:5060`.
    public var description: String { "\(transport):\(host):\(port)" }
}
