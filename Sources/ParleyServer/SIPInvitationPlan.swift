import ParleyCallCore
import ParleyCallModel
import ParleySIP
import ParleySIPCore

/// How the INVITE of a SIP party is written and where it goes, from the gateway's
/// configuration (docs/sip.md, "Routing"); sans-I/O.
///
/// - A phone number goes to the trunk: `sip:+4615550101@trunk;user=phone` (or the digits
///   without `+`, as the trunk wants), From and P-Asserted-Identity the call's CLI at the
///   trunk's domain, the trunk's digest account for its challenges.
/// - A SIP address (`user@domain[:port][;transport=tcp|tls]`, or a `sip:` or `sips:` URI)
///   goes to the route configured for its domain, else to the outbound proxy, else, when
///   direct dialling is allowed and the host is an IP address, to that address. From is
///   the calling app user at parleyd's host, with the caller's display name.
/// - Over TLS (a first hop with `transport=tls`, RFC 3261 §26.2) our Via and Contact name
///   the TLS listener's port, the Contact `sips:` for a `sips:` Request-URI and
///   `;transport=tls` otherwise; a `sips:` Request-URI goes over a TLS first hop or not at
///   all (§26.2.2). The first hop's certificate must carry its TLS name
///   (`firstHop(for:)`): a route's domain, the trunk's domain, else the hop's address.
/// - The caller's custom headers (each named `x-...`) travel as header fields of the
///   INVITE, in name order.
///
/// A call that cannot be placed is refused with a SIP status and a reason, which the call
/// ends with (`SIPCallEvent.failed`): 403 for a header the gateway may not send, 404 for
/// an address that is not a SIP address, 503 for a destination with no route.
struct SIPInvitationPlan {
    /// Why an INVITE cannot be written.
    struct Refusal: Error, Equatable {
        var status: Int
        var reason: String
    }

    let configuration: SIPGatewayConfiguration
    /// Our Via sent-by and Contact host.
    let localHost: SIPHost
    /// Our SIP port (UDP and TCP).
    let localPort: UInt16
    /// Our SIP over TLS port; nil: TLS is not configured, and a TLS first hop is refused.
    var localTLSPort: UInt16? = nil

    /// Where a call's INVITE goes first, and the name (or address) its certificate must
    /// carry when that hop is TLS (RFC 5922 §4: the domain the hop was chosen for).
    struct FirstHop: Equatable {
        var hop: SIPHop
        var tlsName: String
    }

    func invitation(for party: SIPParty, offer: CallOffer) throws(Refusal) -> SIPOutboundCall.Invitation {
        var headers = SIPHeaders()
        for name in offer.headers.keys.sorted() {
            guard name.utf8.count > 2, name.lowercased().hasPrefix("x-") else {
                throw Refusal(status: 403, reason: "header \(name) may not travel on an INVITE: custom headers must be named x-...")
            }
            do { try headers.add(name: name, value: offer.headers[name] ?? "") } catch {
                throw Refusal(status: 403, reason: "header \(name) cannot be sent: \(error.description)")
            }
        }
        let requestURI: SIPURI, from: SIPNameAddress
        var credentials: SIPDigestClient?
        let destination = try firstHop(for: party).hop
        switch party.destination {
        case .phone(let route):
            guard let trunk = configuration.trunk else {
                throw Refusal(status: 503, reason: "no SIP trunk is configured for phone numbers")
            }
            guard let cli = route.callerID else { throw Refusal(status: 403, reason: "a call to a phone number needs a CLI") }
            let trunkHost = try Self.host(trunk.uriHost)
            requestURI = try Self.uri(user: Self.format(route.number, trunk.numberFormat), host: trunkHost,
                                      parameters: [.init(name: "user", value: "phone")])
            let identity = try Self.uri(user: Self.format(cli, trunk.numberFormat), host: trunkHost,
                                        parameters: [.init(name: "user", value: "phone")])
            from = try Self.nameAddress(displayName: offer.displayName, uri: identity)
            do { try headers.add(name: "P-Asserted-Identity", value: "<\(identity)>") } catch {
                throw Refusal(status: 403, reason: "the CLI cannot be sent: \(error.description)")
            }
            if let username = trunk.username {
                do { credentials = try SIPDigestClient(username: username, password: trunk.password ?? "") } catch {
                    throw Refusal(status: 503, reason: "the trunk's account is not usable: \(error)")
                }
            }
        case .uri(let address):
            requestURI = try Self.parseAddress(address)
            // A bridged SIP caller (`user@host`) is presented by its user part at our host.
            let user = offer.from.kind == .sip ? String(offer.from.address.prefix { $0 != "@" }) : offer.from.address
            from = try Self.nameAddress(displayName: offer.displayName, uri: try Self.uri(user: user, host: localHost, parameters: []))
        }
        var ourPort = localPort
        if destination.transport == .tls {
            guard let localTLSPort else {
                throw Refusal(status: 503, reason: "SIP over TLS is not configured (--sip-tls-listen): cannot reach \(destination)")
            }
            ourPort = localTLSPort
        } else if requestURI.isSecure {
            // RFC 3261 §26.2.2: every hop toward a sips: URI is TLS; we only know our first.
            throw Refusal(status: 503, reason: "\(requestURI) needs a TLS first hop, and its route \(destination) is not TLS")
        }
        let to = try Self.nameAddress(displayName: nil, uri: requestURI)
        var contactParameters: [SIPURI.Parameter] = []
        switch destination.transport {
        case .udp: break
        case .tcp: contactParameters.append(.init(name: "transport", value: "tcp"))
        case .tls where !requestURI.isSecure: contactParameters.append(.init(name: "transport", value: "tls"))
        case .tls: break
        }
        let contactURI: SIPURI
        do {
            contactURI = try SIPURI(user: "parleyd", host: localHost, port: ourPort, secure: requestURI.isSecure,
                                    parameters: contactParameters)
        } catch {
            throw Refusal(status: 500, reason: "parleyd's own SIP address is not valid: \(error.description)")
        }
        return SIPOutboundCall.Invitation(
            requestURI: requestURI, from: from, to: to, contact: try Self.nameAddress(displayName: nil, uri: contactURI),
            offer: Array(offer.sdp.utf8), destination: destination, viaHost: localHost, viaPort: ourPort,
            headers: headers, credentials: credentials)
    }

    /// Our side of a call that came in over `transport`: a Contact and Via naming our host
    /// and that transport's port (`parleyd` as the user); nil when no such port is ours.
    func inboundLocal(over transport: SIPHop.Transport) -> SIPInboundCall.Local? {
        var parameters: [SIPURI.Parameter] = []
        let port: UInt16
        switch transport {
        case .udp: port = localPort
        case .tcp:
            port = localPort
            parameters.append(.init(name: "transport", value: "tcp"))
        case .tls:
            guard let localTLSPort else { return nil }
            port = localTLSPort
            parameters.append(.init(name: "transport", value: "tls"))
        }
        guard let uri = try? SIPURI(user: "parleyd", host: localHost, port: port, parameters: parameters),
              let contact = try? SIPNameAddress(uri: uri) else { return nil }
        return SIPInboundCall.Local(contact: contact, viaHost: localHost, viaPort: port)
    }

    /// The first hop of a call to `party` and the name its TLS certificate must carry: the
    /// trunk (named by its domain when it has one) for a phone number; for a SIP address
    /// its domain's route (named by that domain), the outbound proxy, or the address itself
    /// when direct dialling is on (named by their address).
    func firstHop(for party: SIPParty) throws(Refusal) -> FirstHop {
        switch party.destination {
        case .phone:
            guard let trunk = configuration.trunk else {
                throw Refusal(status: 503, reason: "no SIP trunk is configured for phone numbers")
            }
            return FirstHop(hop: trunk.hop, tlsName: trunk.domain ?? trunk.hop.host.text)
        case .uri(let address):
            return try route(try Self.parseAddress(address))
        }
    }

    /// The first hop toward a SIP address: its domain's route, the outbound proxy, or the
    /// address itself when direct dialling is on and it is an IP address.
    func route(_ uri: SIPURI) throws(Refusal) -> FirstHop {
        guard let host = uri.host else { throw Refusal(status: 404, reason: "\(uri) has no host") }
        let domain = host.description.lowercased()
        if let hop = configuration.routes[domain] { return FirstHop(hop: hop, tlsName: host.text.lowercased()) }
        if let proxy = configuration.outboundProxy { return FirstHop(hop: proxy, tlsName: proxy.host.text) }
        if configuration.allowDirect, host.addressBytes != nil, let hop = SIPLiteralHopResolver().hop(for: uri) {
            return FirstHop(hop: hop, tlsName: hop.host.text)
        }
        throw Refusal(status: 503, reason: "no route to SIP domain \(host): configure --sip-route or --sip-outbound-proxy")
    }

    /// `user@domain[:port][;params]`, or a `sip:` or `sips:` URI, as a URI.
    static func parseAddress(_ address: String) throws(Refusal) -> SIPURI {
        let lowered = address.lowercased()
        let text = lowered.hasPrefix("sip:") || lowered.hasPrefix("sips:") ? address : "sip:" + address
        let uri: SIPURI
        do { uri = try SIPURI(parsing: text) } catch {
            throw Refusal(status: 404, reason: "\(address) is not a SIP address: \(error.description)")
        }
        guard uri.scheme == .sip || uri.scheme == .sips else {
            throw Refusal(status: 404, reason: "\(address) is not a sip: or sips: address")
        }
        if let transport = uri.transport, SIPHop.Transport(name: transport) == nil {
            throw Refusal(status: 503, reason: "\(address): transport \(transport) is not supported (udp, tcp, tls)")
        }
        return uri
    }

    static func format(_ number: String, _ format: SIPGatewayConfiguration.Trunk.NumberFormat) -> String {
        switch format {
        case .e164: number
        case .digits: number.hasPrefix("+") ? String(number.dropFirst()) : number
        }
    }

    private static func host(_ text: String) throws(Refusal) -> SIPHost {
        do { return try SIPHost(parsing: text) } catch {
            throw Refusal(status: 500, reason: "the trunk domain \(text) is not a SIP host: \(error.description)")
        }
    }

    private static func uri(user: String, host: SIPHost, parameters: [SIPURI.Parameter]) throws(Refusal) -> SIPURI {
        do { return try SIPURI(user: user, host: host, parameters: parameters) } catch {
            throw Refusal(status: 404, reason: "\(user)@\(host) is not a SIP address: \(error.description)")
        }
    }

    private static func nameAddress(displayName: String?, uri: SIPURI) throws(Refusal) -> SIPNameAddress {
        do { return try SIPNameAddress(displayName: displayName, uri: uri) } catch {
            // A display name SIP cannot quote is left out rather than failing the call.
            do { return try SIPNameAddress(displayName: nil, uri: uri) } catch {
                throw Refusal(status: 500, reason: "\(uri) cannot be written: \(error.description)")
            }
        }
    }
}
