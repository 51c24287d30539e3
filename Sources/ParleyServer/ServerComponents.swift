public import ParleyBus
public import ParleyCallCore
public import ParleyNetLinux
public import ParleyStore
public import ParleyNetCore
public import ParleyPush

/// The adapters a `ParleyServer` runs on, chosen by the composition root (parleyd's
/// `DaemonComposition`, or a test) and handed in: the server builds none of them.
/// Choosing SQLite or PostgreSQL, the in-process bus and directory or Redis ones, the
/// presence router or a customer backend's, is a switch where these are built.
public struct ServerComponents: Sendable {
    /// Opens the store's connections (SQLite today).
    public var stores: CallStoreFactory
    /// This process among the nodes sharing `bus` and `directory`.
    public var node: NodeID
    /// Delivers a message to a device's session on the node that holds it.
    public var bus: any SignalingBus
    /// Which node holds each device's session.
    public var directory: any DeviceDirectory
    /// Where a call goes.
    public var router: any CallRouter
    /// The call engine's scheduler ("parley-calls"); the server stops it at shutdown.
    public var engineLoop: EventLoop
    /// Builds the push sender call pushes go out with (APNs and FCM over HTTP/2).
    public var pushSender: PushSenderFactory
    /// The SIP user agent calls to phone numbers and SIP addresses go through; nil (the
    /// default, as long as none is built) refuses them with `not_implemented`.
    public var sipCalls: (any SIPCallPort)?
    /// Where each application's dialling settings come from; with one, every call to a
    /// phone number or SIP address is checked against its application's (docs/calls.md,
    /// "Dialling policy"). nil (the default) leaves such calls to the router and
    /// `sipCalls`, as before settings existed; parleyd always sets it.
    public var diallingSettings: DiallingSettingsSource?

    public init(stores: CallStoreFactory, node: NodeID, bus: any SignalingBus, directory: any DeviceDirectory,
                router: any CallRouter, engineLoop: EventLoop, pushSender: @escaping PushSenderFactory,
                sipCalls: (any SIPCallPort)? = nil, diallingSettings: DiallingSettingsSource? = nil) {
        self.stores = stores
        self.node = node
        self.bus = bus
        self.directory = directory
        self.router = router
        self.engineLoop = engineLoop
        self.pushSender = pushSender
        self.sipCalls = sipCalls
        self.diallingSettings = diallingSettings
    }

    /// One server alone: the given store, the in-process bus and directory, the presence
    /// router, a new engine loop and the push sender of `configuration`.
    public static func local(stores: CallStoreFactory, configuration: ServerConfiguration) throws(NetError) -> ServerComponents {
        ServerComponents(stores: stores, node: .local, bus: LocalSignalingBus(), directory: LocalDeviceDirectory(),
                         router: PresenceRouter(), engineLoop: try EventLoop(name: "parley-calls"),
                         pushSender: pushSender(for: configuration))
    }

    /// The push sender of the configuration's endpoints, retry policy, timeout and CA file.
    public static func pushSender(for configuration: ServerConfiguration) -> PushSenderFactory {
        let endpoints = configuration.pushEndpoints
        let policy = configuration.pushRetryPolicy
        let timeout = Int(configuration.pushRequestTimeout.wholeMilliseconds)
        let caFile = configuration.pushCAFile
        return { (onEvent) throws(PushError) in
            try PushSender(endpoints: endpoints, policy: policy, timeoutMilliseconds: timeout, caFile: caFile, onEvent: onEvent)
        }
    }
}

/// Builds a push sender, given the function its events (attempts, answers, ends) go to.
public typealias PushSenderFactory = @Sendable (@escaping @Sendable (PushEvent) -> Void) throws(PushError) -> PushSender
