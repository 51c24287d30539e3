public import ParleySignaling
public import ParleyCallModel

/// Where a call goes: a router's answer to a `RouteRequest`.
///
/// Devices and conference rooms are reached, and phone numbers and SIP addresses where SIP
/// dialling is on (`CallConfiguration.sipDialling`). A decision that needs a party kind
/// not enabled (a trunk, a SIP endpoint, with dialling off) is refused with
/// `not_implemented`: at once as the `error` reply to `call.start` when the
/// router answers within the request, or as `call.ended` `error` `not_implemented` when
/// it answers later.
public enum RoutingDecision: Sendable, Hashable {
    /// Ring these connected devices (each gets a leg and `call.incoming`).
    case ringDevices([Device])
    /// Wake these devices by push; each joins the ring set when it relays the push.
    case pushDevices([Device])
    /// Dial this phone number through a SIP trunk, presenting a calling line identity.
    case dialNumber(PhoneRoute)
    /// Dial this SIP URI, with these extra headers on the INVITE.
    case dialSIP(uri: String, headers: [String: String])
    /// Join the caller to this conference room.
    case joinRoom(String)
    /// Refuse the call: it ends with `error` and this code and text
    /// (`destination_not_found`, `destination_unavailable`, ...).
    case reject(SignalingMessage.CallError)

    /// For a decision whose party kind a server does not reach unless configured to: the
    /// address kind it would reach (`phone`, `sip`), as the `not_implemented` refusal
    /// names it: phone numbers and SIP addresses are reached where SIP dialling is on
    /// (`refusedKind(sipDialling:)`).
    public var unbuiltKind: SignalingMessage.Address.Kind? {
        switch self {
        case .ringDevices, .pushDevices, .reject, .joinRoom: nil
        case .dialNumber: .phone
        case .dialSIP: .sip
        }
    }

    /// The address kind a `not_implemented` refusal of this decision names, or nil when a
    /// server with SIP dialling `sipDialling` places it.
    public func refusedKind(sipDialling: Bool) -> SignalingMessage.Address.Kind? {
        switch self {
        case .dialNumber, .dialSIP: sipDialling ? nil : unbuiltKind
        default: unbuiltKind
        }
    }

    /// The text of the `not_implemented` refusal of a call to `kind`: such calls go out
    /// through a SIP gateway, which the operator did not configure on this server.
    public static func unplacedMessage(_ kind: SignalingMessage.Address.Kind) -> String {
        "this server places no calls to \(kind.rawValue) addresses: it has no SIP gateway configured (parleyd --sip-listen)"
    }
}

/// A phone number to dial, the trunk to dial it through, and the number to present.
public struct PhoneRoute: Sendable, Hashable {
    /// The number in E.164 form with a leading `+`.
    public var number: String
    /// The configured trunk to dial through; nil for the server's default trunk.
    public var trunk: String?
    /// The calling line identity to present (E.164), sent as From and
    /// P-Asserted-Identity. Required: a call routed to a phone number without one is
    /// refused (`bad_request`, field `cli`) and nothing is dialled.
    public var callerID: String?

    public init(number: String, trunk: String? = nil, callerID: String? = nil) {
        self.number = number
        self.trunk = trunk
        self.callerID = callerID
    }
}
