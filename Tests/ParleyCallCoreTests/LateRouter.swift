import ParleyCallModel
import ParleyCallCore
import ParleySignaling

/// A router that never answers within the request: every decision is delivered later
/// through `CallRegistry.handleRouting` (as a webhook's or a shared directory's would be).
struct LateRouter: CallRouter {
    func route(_ request: RouteRequest, presence: Presence) -> RoutingDecision? { nil }
}

/// A router that answers at once with a fixed decision, whatever the destination.
struct FixedRouter: CallRouter {
    let decision: RoutingDecision

    func route(_ request: RouteRequest, presence: Presence) -> RoutingDecision? { decision }
}
