public import ParleySIP
public import ParleySIPCore

/// Where parleyd's SIP user agent (`SIPUserAgent`) sends the INVITEs of calls to SIP
/// addresses and phone numbers (docs/sip.md, "Routing"): a trunk for phone numbers, a
/// route per SIP domain, an outbound proxy, or the address itself when it is an IP
/// literal and direct dialling is allowed. Names are not looked up in DNS (no SRV or
/// NAPTR yet): a domain is reached through a route, the proxy, or not at all.
public struct SIPGatewayConfiguration: Sendable, Hashable {
    /// A SIP trunk phone numbers are dialled through (a carrier or a PBX).
    public struct Trunk: Sendable, Hashable {
        /// How the trunk wants the number in the Request-URI and To.
        public enum NumberFormat: String, Sendable, Hashable, CaseIterable {
            /// E.164 with its `+`: `sip:+4615550101@trunk;user=phone`.
            case e164
            /// E.164 digits without the `+`: `sip:4615550101@trunk;user=phone`.
            case digits
        }

        /// The trunk's first hop: where INVITEs go.
        public var hop: SIPHop
        /// The host written in the Request-URI, To, From and P-Asserted-Identity; the
        /// hop's host when nil.
        public var domain: String?
        /// The account answering the trunk's 401/407 digest challenges; nil sends none.
        public var username: String?
        public var password: String?
        public var numberFormat: NumberFormat

        public init(hop: SIPHop, domain: String? = nil, username: String? = nil, password: String? = nil,
                    numberFormat: NumberFormat = .e164) {
            self.hop = hop
            self.domain = domain
            self.username = username
            self.password = password
            self.numberFormat = numberFormat
        }

        /// The host of the trunk's URIs.
        public var uriHost: String { domain ?? hop.host.description }
    }

    /// The trunk phone numbers go through; nil: phone numbers cannot be dialled.
    public var trunk: Trunk?
    /// SIP domains (lowercase) and the hop their calls go to (`--sip-route DOMAIN=HOST:PORT`).
    public var routes: [String: SIPHop]
    /// Calls to SIP domains without a route go here; nil: they go nowhere unless direct.
    public var outboundProxy: SIPHop?
    /// Whether a SIP address whose host is an IP address may be called at that address
    /// when no route or proxy applies. Off by default: an app could otherwise make the
    /// server send INVITEs anywhere.
    public var allowDirect: Bool
    /// The host parleyd writes in its Via and Contact and as the domain of an app user's
    /// From; nil: the SIP listen address (which must then not be a wildcard).
    public var advertisedHost: String?
    /// The behaviour of every outbound call: timers, session interval, User-Agent.
    public var call: SIPOutboundCall.Configuration
    /// The most SIP calls in progress at once over the whole server; more are refused
    /// with 503 before anything is sent.
    public var maxCalls: Int
    /// SIP peers that may call in from any address once they answer a digest challenge
    /// (`--sip-peers-file`): username to password. Empty: calls in come only from the
    /// trunk's, a route's or the outbound proxy's address.
    public var peers: [String: String] = [:]
    /// The realm of those challenges (`--sip-peer-realm`).
    public var peerRealm = "parley"
    /// The algorithms those challenges offer, one challenge each, most preferred first
    /// (`--sip-peer-algorithms`). MD5 alone by default: baresip 1.0 (libre) gives up on a
    /// 401 that also offers SHA-256, and most SIP phones speak nothing else.
    public var peerAlgorithms: [SIPDigestAlgorithm] = [.md5]

    public init(trunk: Trunk? = nil, routes: [String: SIPHop] = [:], outboundProxy: SIPHop? = nil, allowDirect: Bool = false,
                advertisedHost: String? = nil, call: SIPOutboundCall.Configuration = .init(userAgent: "parleyd"),
                maxCalls: Int = 10_000) {
        self.trunk = trunk
        self.routes = routes
        self.outboundProxy = outboundProxy
        self.allowDirect = allowDirect
        self.advertisedHost = advertisedHost
        self.call = call
        self.maxCalls = maxCalls
    }
}
