import ParleySignaling

/// The local router: answers at once from this node's presence. A user's connected
/// devices ring; a user with none but with push tokens is pushed; a user the application
/// never saw is `destination_not_found`, one with neither `destination_unavailable`.
/// Phone, SIP and conference destinations get the decision that would reach them (the
/// default trunk, the URI with the call's headers, the room), which is refused with
/// `not_implemented` until those party kinds are built.
public struct PresenceRouter: CallRouter {
    public init() {}

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
            return .dialNumber(PhoneRoute(number: number))
        case .sip(let uri):
            return .dialSIP(uri: uri, headers: request.headers)
        case .conference(let room):
            return .joinRoom(room)
        }
    }
}
