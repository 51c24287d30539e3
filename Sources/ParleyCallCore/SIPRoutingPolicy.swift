/// How `PresenceRouter` routes the destinations outside the app: phone numbers (through
/// a SIP trunk) and SIP addresses. The place a route table goes (a trunk per number
/// prefix, an allow list, the application's default CLI); parleyd builds one from its SIP
/// configuration (issue 10).
///
/// A destination the policy does not route is rejected with `destination_unavailable`
/// and a message saying so. Whether a routed one is placed at all is the server's
/// (`CallConfiguration.sipDialling`): without SIP dialling it is refused with
/// `not_implemented` whatever the policy says.
public struct SIPRoutingPolicy: Sendable {
    /// The route of a call to `number` (E.164), or nil when this server dials no such
    /// number. The route's `callerID` is the CLI: `request.cli`, else the application's
    /// default; a route without one is refused (`bad_request`, field `cli`).
    public var phone: @Sendable (_ number: String, _ request: RouteRequest) -> PhoneRoute?
    /// Whether a call to this SIP address may be dialled.
    public var sip: @Sendable (_ address: String, _ request: RouteRequest) -> Bool

    public init(
        phone: @escaping @Sendable (_ number: String, _ request: RouteRequest) -> PhoneRoute?,
        sip: @escaping @Sendable (_ address: String, _ request: RouteRequest) -> Bool
    ) {
        self.phone = phone
        self.sip = sip
    }

    /// Every number through the server's default trunk with the CLI of `call.start`, and
    /// every SIP address: the decisions the local router gave before routes existed. A
    /// server that dials must narrow this (open dialling is how toll fraud starts).
    public static let asDialled = SIPRoutingPolicy(
        phone: { number, request in PhoneRoute(number: number, callerID: request.cli) },
        sip: { _, _ in true })

    /// No SIP gateway: neither phone numbers nor SIP addresses are routed.
    public static let noGateway = SIPRoutingPolicy(phone: { _, _ in nil }, sip: { _, _ in false })
}
