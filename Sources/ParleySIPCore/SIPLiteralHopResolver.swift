public import ParleySIP

/// Resolves URIs whose host is an IP address, and names listed in `routes`, without DNS:
/// the `maddr` parameter if it is an address, else the host; the `transport` parameter,
/// else UDP (TLS for `sips:`), as RFC 3263 §4.1 says for a numeric host; the port written,
/// else the transport's default. A name listed in `routes` goes to its hop whatever the
/// URI's port and transport. Anything else resolves to nil.
public struct SIPLiteralHopResolver: SIPHopResolver, Hashable {
    /// Where names go (lowercased name to hop), as parleyd's `--sip-route DOMAIN=HOST:PORT`.
    public var routes: [String: SIPHop]

    /// A resolver with the given name routes.
    public init(routes: [String: SIPHop] = [:]) {
        var lowered: [String: SIPHop] = [:]
        for (name, hop) in routes { lowered[SIPText.lowercased(name)] = hop }
        self.routes = lowered
    }

    public func hop(for uri: SIPURI) -> SIPHop? {
        guard uri.scheme == .sip || uri.scheme == .sips, var host = uri.host else { return nil }
        if let maddr = uri.maddr, let address = try? SIPHost(parsing: maddr), address.addressBytes != nil { host = address }
        guard host.addressBytes != nil else { return routes[SIPText.lowercased(host.text)] }
        var transport: SIPHop.Transport = uri.isSecure ? .tls : .udp
        if let name = uri.transport {
            // A transport we do not speak (sctp, ws) cannot be reached.
            guard let named = SIPHop.Transport(name: name) else { return nil }
            transport = named
        }
        return SIPHop(transport: transport, host: host, port: uri.port ?? transport.defaultPort)
    }
}
