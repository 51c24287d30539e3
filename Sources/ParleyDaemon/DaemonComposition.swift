import ParleyBus
import ParleyCallCore
import ParleyNetLinux
import ParleyServer
import ParleyStore

/// parleyd's composition root: the one place that picks the adapters `serve` runs on and
/// hands them to `ParleyServer` (LiveKit's `createStore` / `CreateRouter` are the model).
/// Today one node alone: the SQLite store in the data directory (`DaemonStores`), the
/// in-process signaling bus and device directory, the presence router, one engine loop,
/// the push sender of the configured endpoints, and every application's dialling settings
/// enforced (`withDiallingPolicy`).
/// A shared store, a Redis bus and directory or a customer backend's router are a switch
/// here, on a configuration setting, with nothing changed in the server.
enum DaemonComposition {
    static func components(for configuration: ServerConfiguration, log: ServerLog) throws -> ServerComponents {
        withDiallingPolicy(ServerComponents(
            stores: try DaemonStores.serving(configuration.dataDirectory),
            node: .local,
            bus: LocalSignalingBus(),
            directory: LocalDeviceDirectory(),
            router: PresenceRouter(),
            engineLoop: try EventLoop(name: "parley-calls"),
            // APNs and FCM over HTTP/2 (libcurl), as the configuration names them.
            pushSender: ServerComponents.pushSender(for: configuration),
            // Calls to phone numbers and SIP addresses, when a gateway is configured.
            sipCalls: configuration.sipGateway.map { SIPUserAgent(configuration: $0, numbers: configuration.numberRoutes, log: log) }))
    }

    /// parleyd checks every call to a phone number or SIP address against its
    /// application's dialling settings from the store (docs/calls.md, "Dialling policy"),
    /// whatever dials them: an application nobody configured dials nothing. The settings
    /// are reread every 5 s, so `parleyd app set-dialling` from another process applies
    /// within that.
    static func withDiallingPolicy(_ components: ServerComponents) -> ServerComponents {
        var components = components
        components.diallingSettings = .store
        return components
    }
}
