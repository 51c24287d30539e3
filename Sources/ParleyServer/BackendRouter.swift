import ParleyCallCore
import ParleyStore
import Synchronization

/// The routing port's backend adapter (`CallRouter`): an application whose backend takes
/// app calls (`parleyd app callback set KEY URL --app-calls`, with `ice` among its events)
/// has each call its users place routed by its backend's answer to an ICE, as on Sinch;
/// every other call goes to `fallback` (the presence router).
///
/// `route` answers nil for such a call (it waits in its routing state) and hands the
/// request to `ask`, which the engine sets: it posts the ICE and delivers the decision
/// through `CallRegistry.handleRouting` when the answer comes.
final class BackendRouter: CallRouter, @unchecked Sendable {
    // @unchecked: `ask` is behind a Mutex; the rest is immutable.
    let fallback: any CallRouter
    private let settings: CallbackSettingsSource
    private let asker = Mutex<(@Sendable (RouteRequest) -> Void)?>(nil)

    init(fallback: any CallRouter, settings: CallbackSettingsSource) {
        self.fallback = fallback
        self.settings = settings
    }

    /// Where requests the backend routes go (set once by the engine).
    func setAsk(_ ask: @escaping @Sendable (RouteRequest) -> Void) {
        asker.withLock { $0 = ask }
    }

    func route(_ request: RouteRequest, presence: Presence) -> RoutingDecision? {
        guard let settings = settings.settings(applicationKey: request.caller.user.applicationKey), settings.appCalls,
              settings.events.contains(.ice), let ask = asker.withLock({ $0 }) else {
            return fallback.route(request, presence: presence)
        }
        ask(request)
        return nil
    }
}
