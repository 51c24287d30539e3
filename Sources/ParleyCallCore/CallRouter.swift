public import ParleySignaling

/// The routing port: where a call goes. Asked once per call, when `call.start` is
/// accepted; the call waits in its routing state until the decision arrives.
///
/// A router that knows at once returns the decision (the local `PresenceRouter`). One that
/// must ask elsewhere (a customer backend's webhook, a directory shared by several nodes)
/// returns nil, hands the request to its own thread or client without blocking, and
/// delivers the decision later through `CallRegistry.handleRouting(_:callID:now:)`. A
/// decision that does not arrive within `CallConfiguration.routingTimeout` ends the call
/// with `error` `destination_unavailable`.
public protocol CallRouter: Sendable {
    /// The decision for `request` now, or nil when it will be delivered later. `presence`
    /// is this node's view of who is connected.
    func route(_ request: RouteRequest, presence: Presence) -> RoutingDecision?
}

/// What a router is asked: who calls whom, with the caller's custom headers.
public struct RouteRequest: Sendable, Hashable {
    public var callID: String
    /// The caller's device.
    public var caller: Device
    /// The destination of `call.start` (`to`).
    public var destination: SignalingMessage.Address
    public var headers: [String: String]
    public var video: Bool
    /// `call.start`'s `cli`: for a phone destination, the calling line identity the caller
    /// asked to present.
    public var cli: String?

    public init(
        callID: String, caller: Device, destination: SignalingMessage.Address, headers: [String: String], video: Bool,
        cli: String? = nil
    ) {
        self.callID = callID
        self.caller = caller
        self.destination = destination
        self.headers = headers
        self.video = video
        self.cli = cli
    }
}
