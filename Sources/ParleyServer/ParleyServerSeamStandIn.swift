// TEMPORARY, on branch wt-daemon only: a stand-in for the server-core helper's
// ParleyServer, written to the seam in docs (prompts/daemon.md) so parleyd compiles and
// its REST API can be run. It serves HTTP only (no signaling WebSocket, no media). The
// integrator deletes this file at merge; the real ParleyServer.swift replaces it.
public import ParleyNet
public import ParleyHTTP
public import ParleyEdge
public import ParleyStore
import ParleyAuth
import ParleyCalling
import Foundation
import Synchronization

public typealias HTTPHandler = @Sendable (HTTPRequest, EdgeRequestContext, EdgeResponder) -> Void

public final class ParleyServer: Sendable {
    public let configuration: ServerConfiguration
    public let metrics = ServerMetrics()
    public let store: StoreQueue
    public let developmentApplication: Application?
    private let log: ServerLog
    private let httpHandler = Mutex<HTTPHandler?>(nil)
    private let edge = Mutex<EdgeServer?>(nil)
    private let control: StoreBackedCallControl

    public init(configuration: ServerConfiguration, log: ServerLog) throws {
        self.configuration = configuration
        self.log = log
        try FileManager.default.createDirectory(atPath: configuration.dataDirectory, withIntermediateDirectories: true)
        store = try StoreQueue(path: configuration.dataDirectory + "/" + SQLiteStore.defaultFileName)
        let now = RESTAPI.wallClockMilliseconds()
        _ = try store.performAndWait { store throws(StoreError) in try store.closeCallsInProgress(at: now) }
        var created: Application?
        if configuration.createDevelopmentApplication {
            let credentials = try ApplicationCredentials.generate()
            created = try store.performAndWait { store throws(StoreError) -> Application? in
                guard try store.applications().isEmpty else { return nil }
                return try store.createApplication(key: credentials.key, name: "development", secret: credentials.secret.base64, at: now)
            }
        }
        developmentApplication = created
        control = StoreBackedCallControl(store: store)
    }

    public func installHTTPHandler(_ handler: @escaping HTTPHandler) {
        httpHandler.withLock { $0 = handler }
    }

    public func start() throws {
        let fallback: HTTPHandler = { request, _, responder in
            if request.path == "/healthz" {
                responder.respond(.text(status: 200, "ok\n"))
            } else {
                responder.respond(.json(status: 404, body: Array(#"{"code":"not_found","message":"not found"}"#.utf8)))
            }
        }
        let handler = httpHandler.withLock { $0 } ?? fallback
        let server = try EdgeServer(
            configuration: EdgeConfiguration(listenAddresses: configuration.listenAddresses, maxConnections: configuration.maxConnections),
            handlers: EdgeHandlers(deferredHTTP: handler))
        edge.withLock { $0 = server }
        log.info("server.start", ["addresses": server.localAddresses.map { $0.description }.joined(separator: ",")])
    }

    public var localAddresses: [SocketAddress] { edge.withLock { $0?.localAddresses ?? [] } }

    public var callControl: any CallControl { control }

    public func shutdown() {
        let server = edge.withLock { server in
            defer { server = nil }
            return server
        }
        server?.shutdown(gracePeriod: .seconds(2))
        log.info("server.stop")
    }
}

/// Hangs up through the store: the stand-in has no call engine.
private struct StoreBackedCallControl: CallControl {
    let store: StoreQueue

    func hangUp(callID: String, applicationKey: String) async -> HangUpOutcome {
        let now = RESTAPI.wallClockMilliseconds()
        let outcome = try? await store.perform { store throws(StoreError) -> HangUpOutcome in
            guard let call = try store.call(id: callID, applicationKey: applicationKey) else { return .notFound }
            guard call.state != .ended else { return .alreadyEnded }
            _ = try store.finishCall(id: callID, cause: call.details.answeredTime == nil ? .canceled : .hungUp, at: now)
            return .hungUp
        }
        return outcome ?? .notFound
    }

    func liveCallCounts() async -> [CallState: Int] {
        let counts = try? await store.perform { store throws(StoreError) in try store.callCountsByState() }
        return (counts ?? [:]).filter { $0.key != .ended }
    }
}
