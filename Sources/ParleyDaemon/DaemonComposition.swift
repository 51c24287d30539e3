import ParleyBus
import ParleyCallCore
import ParleyNetLinux
import ParleyServer
import ParleyStore

/// parleyd's composition root: the one place that picks the adapters `serve` runs on and
/// hands them to `ParleyServer` (LiveKit's `createStore` / `CreateRouter` are the model).
/// Today one node alone: the SQLite store in the data directory (`DaemonStores`), the
/// in-process signaling bus and device directory, the presence router, one engine loop and
/// the push sender of the configured endpoints.
/// A shared store, a Redis bus and directory or a customer backend's router are a switch
/// here, on a configuration setting, with nothing changed in the server.
enum DaemonComposition {
    static func components(for configuration: ServerConfiguration, log: ServerLog) throws -> ServerComponents {
        ServerComponents(
            stores: try DaemonStores.serving(configuration.dataDirectory),
            node: .local,
            bus: LocalSignalingBus(),
            directory: LocalDeviceDirectory(),
            router: PresenceRouter(),
            engineLoop: try EventLoop(name: "parley-calls"),
            // APNs and FCM over HTTP/2 (libcurl), as the configuration names them.
            pushSender: ServerComponents.pushSender(for: configuration),
            // Calls to phone numbers and SIP addresses, when a gateway is configured.
            sipCalls: configuration.sipGateway.map { SIPUserAgent(configuration: $0, log: log) })
    }
}
