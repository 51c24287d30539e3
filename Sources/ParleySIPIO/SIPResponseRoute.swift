import ParleyNetCore
import ParleySIP

/// Where a response goes (RFC 3261 §18.2.2 with RFC 3581 §4), from its top Via and the
/// request's source. Sans-I/O: the transport carries the route out.
enum SIPResponseRoute: Sendable, Hashable {
    /// The TCP or TLS connection the request arrived on, still open.
    case connection(UInt64)
    /// A TCP connection to this address: one already open to it, or a new one.
    case stream(SocketAddress)
    /// A TLS connection to this address whose certificate carries `serverName` (the
    /// Via's sent-by host): one this server opened there already, or a new one.
    case secureStream(SocketAddress, serverName: String)
    /// A datagram to this address.
    case datagram(SocketAddress)
    /// Nowhere this transport can reach; the reason, for the counters' sake.
    case unroutable(String)

    /// The default SIP port for UDP and TCP (§19.1.2).
    static let defaultPort: UInt16 = SIPTransport.udp.defaultPort

    /// - TCP: the connection the request came on while it is open; else a connection to
    ///   the Via's `received` address (or its sent-by address) and sent-by port.
    /// - TLS: the same, the port 5061 when the Via names none; a new connection verifies
    ///   the sent-by host (a name or an address) against the peer's certificate.
    /// - UDP: with `rport=N`, the `received` address (or the source's) and port N; with a
    ///   bare `rport` (never stamped), the source; otherwise the `received` address (or
    ///   the sent-by address) and the sent-by port, 5060 when the Via names none. A
    ///   sent-by name without `received` is unroutable: there is no DNS here (and a request
    ///   stamped by this transport always has `received` then). `maddr` (multicast) is not
    ///   followed. A response whose Via cannot be read goes back to the source.
    static func resolve(topVia: SIPVia?, source: SIPMessageSource, connectionOpen: Bool) -> SIPResponseRoute {
        switch source.transport {
        case .tcp, .tls:
            if connectionOpen, let id = source.connectionID { return .connection(id) }
            guard let via = topVia else { return .unroutable("the connection closed and the Via cannot be read") }
            guard let address = address(via.received ?? via.host, port: via.port ?? source.transport.defaultPort) else {
                return .unroutable("the connection closed and the Via's sent-by \(via.host) is not an IP address")
            }
            return source.transport == .tls ? .secureStream(address, serverName: via.host.text) : .stream(address)
        case .udp:
            guard let via = topVia else { return .datagram(source.remoteAddress) }
            switch via.returnPort {
            case .port(let port)?:
                let host = via.received.flatMap { address($0, port: port) }
                return .datagram(host ?? source.remoteAddress.withPort(port))
            case .requested?:
                return .datagram(source.remoteAddress)
            case nil:
                guard let address = address(via.received ?? via.host, port: via.port ?? defaultPort) else {
                    return .unroutable("the Via's sent-by \(via.host) is not an IP address and carries no received")
                }
                return .datagram(address)
            }
        }
    }

    private static func address(_ host: SIPHost, port: UInt16) -> SocketAddress? {
        host.addressBytes.flatMap { SocketAddress(hostBytes: $0, port: port) }
    }
}
