import ParleySignaling

/// The local router: answers at once from this node's presence. A user's connected
/// devices ring; a user with none but with push tokens is pushed; a user the application
/// never saw is `destination_not_found`, one with neither `destination_unavailable`.
/// Phone numbers and SIP addresses are routed as its `SIPRoutingPolicy` says (by default,
/// the decision that would reach them: the default trunk with the call's CLI, the address
/// with the call's headers; a destination the policy does not route is rejected with
/// `destination_unavailable`). A conference destination gets the room (`joinRoom`).
public struct PresenceRouter: CallRouter {
    /// How phone numbers and SIP addresses are routed.
    public var sip: SIPRoutingPolicy

    public init(sip: SIPRoutingPolicy = .asDialled) {
        self.sip = sip
    }

    public func route(_ request: RouteRequest, presence: Presence) -> RoutingDecision? {
        switch request.destination {
        case .user(let userID):
            let callee = AppUser(applicationKey: request.caller.user.applicationKey, userID: userID)
            guard presence.isKnown(callee) else {
                return .reject(.init(code: .destinationNotFound, message: "destination user not found"))
            }
            let devices = presence.devices(of: callee)
            if !devices.isEmpty { return .ringDevices(devices) }
            let pushDevices = presence.pushDevices(of: callee)
            if !pushDevices.isEmpty { return .pushDevices(pushDevices) }
            return .reject(.init(code: .destinationUnavailable, message: "destination user has no connected device"))
        case .phone(let number):
            guard let route = sip.phone(number, request) else {
                return .reject(.init(code: .destinationUnavailable, message: "this server dials no such phone number (no SIP trunk routes it)"))
            }
            return .dialNumber(route)
        case .sip(let address):
            guard sip.sip(address, request) else {
                return .reject(.init(code: .destinationUnavailable, message: "this server has no route to that SIP address"))
            }
            return .dialSIP(uri: address, headers: request.headers)
        case .conference(let room):
            return .joinRoom(room)
        }
    }
}
