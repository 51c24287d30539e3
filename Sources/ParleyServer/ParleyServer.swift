public import ParleyEdgeIO
public import ParleyHTTP
public import ParleyNetCore
import ParleyNetLinux
public import ParleyStore
import ParleyBus
import ParleyAuth
import ParleyCallModel
import ParleyCallCore
import ParleyCrypto
import ParleyMediaCore
import ParleyWebSocket
import ParleySIPIO
import Synchronization
import ParleyVoiceAPI

/// Answers an HTTP request that is not the WebSocket upgrade, from any thread, through the
/// responder (REST handlers wait on the store and the engine).
public typealias HTTPHandler = @Sendable (HTTPRequest, EdgeRequestContext, EdgeResponder) -> Void

/// The Parley server: signaling on `/v1/ws` (docs/protocol.md), the call engine, the media
/// anchor and the call records, on one port with the REST API the daemon installs.
///
/// ```swift
/// let stores = try CallStoreFactory.sqlite(dataDirectory: configuration.dataDirectory)
/// let server = try ParleyServer(configuration: configuration, stores: stores, log: ServerLog())
/// server.installHTTPHandler(rest.handle)     // optional: /healthz and 404 otherwise
/// try server.start()
/// ...
/// server.shutdown()
/// ```
///
/// Threads: the edge runs its own loops; the engine (sessions, `CallRegistry`) runs on one
/// loop of its own ("parley-calls"); media legs on media loops, one per core
/// ("parley-media-N"); SIP, when configured, on a loop of its own ("parley-sip"); the
/// store runs on its queues and its writer's thread, each with a connection of its own
/// from the factory the caller chose.
public final class ParleyServer: Sendable {
    /// The settings the server runs with.
    public let configuration: ServerConfiguration
    /// Counters for `/metrics`.
    public let metrics: ServerMetrics
    /// The store (applications, users, call records), for the REST API and admin commands.
    public let store: StoreQueue
    /// The development application created at this start (the store had none and
    /// `createDevelopmentApplication` is on), so the executable can print its key and secret.
    public let developmentApplication: Application?
    /// Calls a crash left in progress, closed as `error` `server_restarted` at this start.
    public let recoveredCalls: [StoredCall]
    /// The key of the REST API's cursors, from `rest-cursor.key` in the data directory
    /// (made at the first start), for `RESTAPI(cursorKey:)`.
    public let restCursorKey: RESTCursorKey

    private let log: ServerLog
    /// The SIP user agent of the components, when it is parleyd's: it becomes the SIP
    /// transport's delegate at `start()`.
    private let sipUserAgent: SIPUserAgent?
    /// Internal so tests can reach its loop (a stalled engine loop must not stop media).
    let engine: CallEngine
    /// The engine's event loop ("parley-calls"), which the server stops.
    let engineLoop: EventLoop
    private let state = Mutex(State())

    private struct State {
        var httpHandler: HTTPHandler?
        var edge: EdgeServer?
        var sip: SIPTransportServer?
        var stopped = false
    }

    /// A server alone on this machine with the store `stores` opens
    /// (`ServerComponents.local`).
    public convenience init(configuration: ServerConfiguration, stores: CallStoreFactory, log: ServerLog) throws {
        try self.init(configuration: configuration, components: .local(stores: stores, configuration: configuration), log: log)
    }

    /// Opens the store's connections through the components' store factory (the
    /// composition root chose every adapter: parleyd's are SQLite in its data directory,
    /// the in-process bus and directory and the presence router), recovers calls left by a
    /// crash, creates the development application if configured and the store has none,
    /// and prepares the call engine and media anchor. Nothing listens until `start()`.
    public init(configuration: ServerConfiguration, components: ServerComponents, log: ServerLog) throws {
        let stores = components.stores
        // The loop came running from the composition root: a start that fails stops it.
        var started = false
        defer { if !started { components.engineLoop.shutdown() } }
        var configuration = configuration
        try Self.prepareConferences(&configuration)
        if let directory = configuration.recordingDirectory {
            configuration.recordingDirectory = try CallRecordings.resolveDirectory(directory)
        }
        self.configuration = configuration
        self.log = log
        sipUserAgent = components.sipCalls as? SIPUserAgent
        if sipUserAgent != nil, configuration.sipListenAddress == nil {
            throw SIPGatewayConfigurationError("SIP calls need SIP to listen somewhere (--sip-listen)")
        }
        metrics = ServerMetrics()
        store = try StoreQueue(opening: stores)
        // The REST cursor key stays in the data directory whatever the store is.
        restCursorKey = try RESTCursorKey.loadOrCreate(inDirectory: configuration.dataDirectory)
        let now = ServerClock.now().unixMilliseconds
        let generated = configuration.createDevelopmentApplication ? try ApplicationCredentials.generate() : nil
        let (recovered, development, known, applicationKeys) = try store.performAndWait {
            (store) throws(StoreError) -> ([StoredCall], Application?, [KnownUser], Set<String>) in
            let recovered = try store.closeCallsInProgress(at: now)
            var development: Application?
            if let credentials = generated, try store.applications().isEmpty {
                development = try store.createApplication(key: credentials.key, name: "development",
                                                          secret: credentials.secret.base64, at: now)
            }
            return (recovered, development, try store.knownUsers(), Set(try store.applications().map(\.key)))
        }
        // A number's calls would all fail later for want of its application: refused now.
        let unknown = Set(configuration.numberRoutes.routes.map(\.applicationKey)).subtracting(applicationKeys).sorted()
        if !unknown.isEmpty {
            throw NumberRouteApplicationError(applicationKeys: unknown)
        }
        recoveredCalls = recovered
        developmentApplication = development
        for call in recovered {
            log.warning("call.recovered", ["call": call.callId, "state": "ended", "cause": "error", "error": "server_restarted"])
        }
        if let development {
            log.info("app.development.created", ["app": development.key])
        }
        if configuration.mediaAnnouncedAddress == nil, configuration.mediaBindAddress.hostBytes.allSatisfy({ $0 == 0 }) {
            // A wildcard is not a usable ICE candidate: devices could not reach the legs.
            log.warning("media.announce.unspecified", [
                "bind": configuration.mediaBindAddress.description,
                "hint": "set mediaAnnouncedAddress to this host's reachable address",
            ])
        }
        let certificate = try DTLSCertificate.generate()
        let loop = components.engineLoop
        engineLoop = loop
        engine = try CallEngine(
            loop: loop, configuration: configuration, log: log, metrics: metrics, store: store,
            helloStore: StoreQueue(opening: stores, label: "parley.store.hello"),
            node: components.node, bus: components.bus, directory: components.directory, router: components.router,
            sipCalls: components.sipCalls, diallingSettings: components.diallingSettings, recorder: CallRecorder(stores: stores, log: log, metrics: metrics),
            knownUsers: known.map { AppUser(applicationKey: $0.applicationKey, userID: $0.userId) },
            mediaAnchor: { [metrics] (report) throws(NetError) in
                try MediaAnchor(loop: loop, mediaLoopCount: configuration.mediaLoopCount, configuration: configuration,
                                certificate: certificate, log: log, metrics: metrics, report: report)
            })
        started = true
        log.info("server.ready", ["data": configuration.dataDirectory, "store": stores.description, "knownUsers": String(known.count),
                                  "recovered": String(recovered.count)])
    }

    /// Set before `start()`: every HTTP request that is not the WebSocket upgrade goes
    /// here. Without one, `GET /healthz` gets 200 `ok` and anything else a 404 JSON error.
    public func installHTTPHandler(_ handler: @escaping HTTPHandler) {
        state.withLock { $0.httpHandler = handler }
    }

    /// Binds the edge (signaling and REST on `listenAddresses`) and, when configured, SIP
    /// on `sipListenAddress` (its own `parley-sip` loop); returns when listening.
    public func start() throws {
        DescriptorHeadroom.hold(configuration.descriptorHeadroom)
        let handler = state.withLock { $0.httpHandler } ?? Self.defaultHTTPHandler
        var edgeConfiguration = EdgeConfiguration(
            listenAddresses: configuration.listenAddresses, loopCount: configuration.edgeLoopCount,
            maxConnections: configuration.maxConnections, handshakeTimeout: .seconds(10),
            // Above twice the heartbeat, so the edge's idle close never comes before 4004.
            idleTimeout: max(.seconds(120), configuration.heartbeatInterval * 3),
            maxMessageSize: configuration.maxFrameSize,
            // The engine answers requests over maxRequestsPerSecond / requestBurst with
            // rate_limited; the edge's bucket, twice that, is the hard stop: the engine then
            // closes with 4005 after its replies (CallEngine.rateLimited).
            maxMessagesPerSecond: Double(configuration.maxRequestsPerSecond) * 2, messageBurst: configuration.requestBurst * 2)
        edgeConfiguration.rateLimitCloseCode = WebSocketCloseCode(rawValue: 4005)
        if !configuration.tlsListenAddresses.isEmpty {
            guard let certificate = configuration.tlsCertificateFile, let key = configuration.tlsKeyFile else {
                throw EdgeServerConfigurationError(message: "TLS listen addresses need a certificate file and a key file")
            }
            edgeConfiguration.tls = EdgeTLSConfiguration(listenAddresses: configuration.tlsListenAddresses,
                                                         certificateChainFile: certificate, privateKeyFile: key)
        }
        let edge = try EdgeServer(configuration: edgeConfiguration,
                                  handlers: EdgeHandlers(deferredHTTP: handler, webSocket: engine.route()))
        state.withLock { $0.edge = edge }
        log.info("server.listening", ["addresses": edge.localAddresses.map(\.description).joined(separator: ","),
                                      "tlsAddresses": edge.tlsLocalAddresses.map(\.description).joined(separator: ",")])
        if let address = configuration.sipListenAddress {
            let rateLimit = SIPSourceRateLimit(requestsPerSecond: Double(configuration.sipRequestsPerSecond),
                                               burst: configuration.sipRequestBurst)
            // Without a user agent (no SIP calls configured) a stateless responder answers.
            let delegate: any SIPTransportDelegate = sipUserAgent ?? SIPStatelessResponder()
            var tls: SIPTLSConfiguration?
            if let tlsAddress = configuration.sipTLSListenAddress {
                guard let certificate = configuration.sipTLSCertificateFile, let key = configuration.sipTLSKeyFile else {
                    throw EdgeServerConfigurationError(message: "SIP over TLS needs a certificate file and a key file")
                }
                tls = SIPTLSConfiguration(listenAddress: tlsAddress, certificateChainFile: certificate, privateKeyFile: key,
                                          caFile: configuration.sipTLSCAFile)
            }
            let sip = try SIPTransportServer(
                configuration: SIPTransportConfiguration(listenAddress: address, rateLimit: rateLimit,
                                                         forceReturnPort: configuration.sipForceReturnPort, tls: tls),
                delegate: delegate)
            state.withLock { $0.sip = sip }
            if let sipUserAgent {
                do { try sipUserAgent.attach(transport: sip) } catch {
                    sip.shutdown()
                    state.withLock { $0.sip = nil }
                    throw error
                }
            }
            metrics.attachSIPStatistics { [sip] in sip.statistics }
            log.info("sip.listen", ["address": sip.localAddress.description,
                                    "tlsAddress": sip.tlsLocalAddress?.description ?? "",
                                    "transports": sip.tlsLocalAddress == nil ? "udp,tcp" : "udp,tcp,tls",
                                    "handler": sipUserAgent == nil ? "stateless" : "user agent"])
        }
    }

    /// The bound SIP address (UDP and TCP; the port chosen for port 0); nil before
    /// `start()` or without `sipListenAddress`.
    public var sipLocalAddress: SocketAddress? {
        state.withLock { $0.sip?.localAddress }
    }

    /// The bound SIP over TLS address (the port chosen for port 0); nil before `start()`
    /// or without `sipTLSListenAddress`.
    public var sipTLSLocalAddress: SocketAddress? {
        state.withLock { $0.sip?.tlsLocalAddress }
    }

    /// The bound TLS addresses (ports chosen for port 0); empty before `start()` or without TLS.
    public var tlsLocalAddresses: [SocketAddress] {
        state.withLock { $0.edge?.tlsLocalAddresses ?? [] }
    }

    /// The bound signaling/REST addresses (ports chosen for port 0); empty before `start()`.
    public var localAddresses: [SocketAddress] {
        state.withLock { $0.edge?.localAddresses ?? [] }
    }

    /// What the REST API needs from the live engine.
    public var callControl: any CallControl {
        EngineCallControl(engine: engine, store: store)
    }

    /// Media legs open now and pool ports in use (for tests and diagnostics).
    public var mediaLegCount: Int { engineLoop.runAndWait { [engine] in engine.mediaLegCount } ?? 0 }
    public var mediaPortsInUse: Int { engineLoop.runAndWait { [engine] in engine.mediaPortsInUse } ?? 0 }

    /// Ends every call (`error` `internal_error`, "server shutting down"), sends
    /// `shutting_down` to every connection, closes them with 1001, closes the media legs
    /// and stops the loops. The store's last writes are done when this returns.
    public func shutdown() {
        let (first, edge, sip) = state.withLock { state -> (Bool, EdgeServer?, SIPTransportServer?) in
            defer { state.stopped = true }
            return (!state.stopped, state.edge, state.sip)
        }
        guard first else { return }
        // The engine first: the calls it ends tell the SIP user agent, whose CANCELs and
        // BYEs are queued on the SIP loop before the transport's shutdown closes it.
        _ = engineLoop.runAndWait { [engine] in engine.stop() }
        sip?.shutdown()
        edge?.shutdown(gracePeriod: .seconds(2))
        engineLoop.shutdown()
        log.info("server.stopped")
    }

    deinit {
        if !state.withLock({ $0.stopped }) {
            state.withLock { $0.sip }?.shutdown()
            state.withLock { $0.edge }?.shutdown(gracePeriod: .zero)
            engineLoop.shutdown()
        }
    }

    /// The answer without a REST handler: `/healthz`, else 404.
    static let defaultHTTPHandler: HTTPHandler = { request, _, responder in
        if request.path == "/healthz" && (request.method == "GET" || request.method == "HEAD") {
            responder.respond(.text(status: 200, "ok\n"))
        } else {
            responder.respond(.json(status: 404, body: Array(#"{"code":"not_found","message":"no such resource"}"#.utf8)))
        }
    }
}

extension ParleyServer {
    /// The room rate and hold music of `configuration` set into its mixer's configuration;
    /// a rate other than 16 or 48 kHz, an Opus complexity outside 0-10, or a hold music
    /// file that cannot be read, fails.
    static func prepareConferences(_ configuration: inout ServerConfiguration) throws {
        guard configuration.conferenceRoomRate == 16_000 || configuration.conferenceRoomRate == 48_000 else {
            throw ConferenceConfigurationError("conference rooms mix at 16000 or 48000 Hz, not \(configuration.conferenceRoomRate)")
        }
        guard (0...10).contains(configuration.conferenceOpusComplexity) else {
            throw ConferenceConfigurationError("conference Opus complexity is 0 to 10, not \(configuration.conferenceOpusComplexity)")
        }
        configuration.conferenceMixer.mixer.sampleRate = configuration.conferenceRoomRate
        if let path = configuration.conferenceHoldMusicPath {
            do {
                configuration.conferenceMixer.holdMusic = try WAVFile.read(path: path)
            } catch {
                throw ConferenceConfigurationError("cannot read the conference hold music \(path): \(error)")
            }
        }
    }
}

/// `ServerConfiguration`'s conference settings cannot be served.
public struct ConferenceConfigurationError: Error, CustomStringConvertible {
    public let message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A `--sip-number` rule names an application the store does not have.
public struct NumberRouteApplicationError: Error, CustomStringConvertible {
    /// The keys no application has.
    public let applicationKeys: [String]
    public var description: String {
        "--sip-number names an application the store does not have: \(applicationKeys.joined(separator: ", ")) (see parleyd app list)"
    }
}

/// `CallControl` over the engine's loop and the store.
struct EngineCallControl: CallControl {
    let engine: CallEngine
    let store: StoreQueue

    func hangUp(callID: String, applicationKey: String) async -> HangUpOutcome {
        let live: HangUpOutcome?? = await withCheckedContinuation { continuation in
            let accepted = engine.loop.execute { [engine] in
                // 204 only once the ended record is committed, so a GET after it shows the end.
                let outcome = engine.hangUpLive(callID: callID, applicationKey: applicationKey, recorded: {
                    continuation.resume(returning: .some(.hungUp))
                })
                if outcome != .hungUp { continuation.resume(returning: .some(outcome)) }
            }
            if !accepted { continuation.resume(returning: .none) }
        }
        if let outcome = live ?? nil { return outcome }
        let stored = try? await store.perform { (store) throws(StoreError) -> Bool in
            try store.call(id: callID, applicationKey: applicationKey) != nil
        }
        return stored == true ? .alreadyEnded : .notFound
    }

    func liveCallCounts() async -> [CallState: Int] {
        await withCheckedContinuation { continuation in
            let accepted = engine.loop.execute { [engine] in continuation.resume(returning: engine.liveCallCounts()) }
            if !accepted { continuation.resume(returning: [:]) }
        }
    }

    func conferenceParticipants(_ conferenceID: String, applicationKey: String) async -> [ConferenceParticipant] {
        await withCheckedContinuation { continuation in
            let accepted = engine.loop.execute { [engine] in
                engine.conferenceParticipants(conferenceID, applicationKey: applicationKey) { continuation.resume(returning: $0) }
            }
            if !accepted { continuation.resume(returning: []) }
        }
    }

    func manageParticipant(_ command: ConferenceCommand, callID: String, conferenceID: String, applicationKey: String) async -> ConferenceOutcome {
        await withCheckedContinuation { continuation in
            let accepted = engine.loop.execute { [engine] in
                engine.manageParticipant(command, callID: callID, room: conferenceID, applicationKey: applicationKey) {
                    continuation.resume(returning: $0)
                }
            }
            if !accepted { continuation.resume(returning: .roomNotFound) }
        }
    }

    func conferenceStatistics() async -> ConferenceStatistics? {
        await withCheckedContinuation { continuation in
            let accepted = engine.loop.execute { [engine] in
                engine.conferenceStatistics { continuation.resume(returning: $0) }
            }
            if !accepted { continuation.resume(returning: nil) }
        }
    }

    func conferenceCallout(_ request: ConferenceCalloutRequest, applicationKey: String) async -> CalloutOutcome {
        await withCheckedContinuation { continuation in
            let accepted = engine.loop.execute { [engine] in
                continuation.resume(returning: engine.conferenceCallout(request, applicationKey: applicationKey))
            }
            if !accepted { continuation.resume(returning: .refused(code: .internalError, message: "the server is stopping")) }
        }
    }

    func serverCallout(_ request: ServerCalloutRequest, applicationKey: String) async -> CalloutOutcome {
        await withCheckedContinuation { continuation in
            let accepted = engine.loop.execute { [engine] in
                continuation.resume(returning: engine.serverCallout(request, applicationKey: applicationKey))
            }
            if !accepted { continuation.resume(returning: .refused(code: .internalError, message: "the server is stopping")) }
        }
    }

    func updateAnsweredCall(callID: String, applicationKey: String, svaml: SVAMLResponse) async -> Bool {
        await withCheckedContinuation { continuation in
            let accepted = engine.loop.execute { [engine] in
                continuation.resume(returning: engine.update(callID: callID, applicationKey: applicationKey, svaml: svaml))
            }
            if !accepted { continuation.resume(returning: false) }
        }
    }

    func kick(callID: String?, conferenceID: String, applicationKey: String) async -> ConferenceOutcome {
        await withCheckedContinuation { continuation in
            let accepted = engine.loop.execute { [engine] in
                continuation.resume(returning: engine.kickFromRoom(conferenceID, callID: callID, applicationKey: applicationKey))
            }
            if !accepted { continuation.resume(returning: .roomNotFound) }
        }
    }
}

/// `ParleyServer.start()` was given a configuration it cannot serve.
public struct EdgeServerConfigurationError: Error, CustomStringConvertible {
    /// What is wrong.
    public let message: String
    public var description: String { message }
}
