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
/// - A SIP address (`user@domain[:port][;transport=tcp]`, or a `sip:` URI) goes to the
///   route configured for its domain, else to the outbound proxy, else, when direct
///   dialling is allowed and the host is an IP address, to that address. From is the
///   calling app user at parleyd's host, with the caller's display name.
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
        let requestURI: SIPURI, from: SIPNameAddress, destination: SIPHop
        var credentials: SIPDigestClient?
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
            destination = trunk.hop
        case .uri(let address):
            let uri = try Self.parseAddress(address)
            requestURI = uri
            destination = try route(uri)
            from = try Self.nameAddress(displayName: offer.displayName,
                                        uri: try Self.uri(user: offer.from.address, host: localHost, parameters: []))
        }
        guard destination.transport != .tls else {
            throw Refusal(status: 503, reason: "SIP over TLS is not supported yet (\(destination))")
        }
        let to = try Self.nameAddress(displayName: nil, uri: requestURI)
        var contactParameters: [SIPURI.Parameter] = []
        if destination.transport == .tcp { contactParameters.append(.init(name: "transport", value: "tcp")) }
        let contactURI: SIPURI
        do {
            contactURI = try SIPURI(user: "parleyd", host: localHost, port: localPort, parameters: contactParameters)
        } catch {
            throw Refusal(status: 500, reason: "parleyd's own SIP address is not valid: \(error.description)")
        }
        return SIPOutboundCall.Invitation(
            requestURI: requestURI, from: from, to: to, contact: try Self.nameAddress(displayName: nil, uri: contactURI),
            offer: Array(offer.sdp.utf8), destination: destination, viaHost: localHost, viaPort: localPort,
            headers: headers, credentials: credentials)
    }

    /// The first hop toward a SIP address: its domain's route, the outbound proxy, or the
    /// address itself when direct dialling is on and it is an IP address.
    func route(_ uri: SIPURI) throws(Refusal) -> SIPHop {
        guard let host = uri.host else { throw Refusal(status: 404, reason: "\(uri) has no host") }
        if let hop = configuration.routes[host.description.lowercased()] { return hop }
        if let proxy = configuration.outboundProxy { return proxy }
        if configuration.allowDirect, host.addressBytes != nil, let hop = SIPLiteralHopResolver().hop(for: uri) { return hop }
        throw Refusal(status: 503, reason: "no route to SIP domain \(host): configure --sip-route or --sip-outbound-proxy")
    }

    /// `user@domain[:port][;params]` or a `sip:` URI as a `sip:` URI.
    static func parseAddress(_ address: String) throws(Refusal) -> SIPURI {
        let lowered = address.lowercased()
        let text = lowered.hasPrefix("sip:") || lowered.hasPrefix("sips:") ? address : "sip:" + address
        let uri: SIPURI
        do { uri = try SIPURI(parsing: text) } catch {
            throw Refusal(status: 404, reason: "\(address) is not a SIP address: \(error.description)")
        }
        guard uri.scheme == .sip else {
            throw Refusal(status: 503, reason: "\(address): sips (SIP over TLS) is not supported yet")
        }
        if let transport = uri.transport, SIPHop.Transport(name: transport) == nil {
            throw Refusal(status: 503, reason: "\(address): transport \(transport) is not supported (udp, tcp)")
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
