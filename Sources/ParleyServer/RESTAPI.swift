public import ParleyHTTP
import ParleyEdgeIO
public import ParleyStore
import ParleyAuth
import ParleyCallCore
import ParleyVoiceAPI
import Foundation
import Synchronization

/// `parleyd`'s REST API (docs/rest.md): call records for an application's backend,
/// hanging up a call, health and Prometheus metrics.
///
/// ```swift
/// let api = RESTAPI(store: server.store, callControl: server.callControl, metrics: server.metrics,
///                   cursorKey: server.restCursorKey)
/// server.installHTTPHandler(api.handler)
/// ```
///
/// `/v1/...` needs HTTP Basic credentials (application key and secret); `/healthz` and
/// `/metrics` need none. Every error is JSON `{"code": ..., "message": ...}`. The
/// conference endpoints of the Sinch Voice API's shape (`/calling/v1/conferences/...`,
/// `RESTConferenceAPI.swift`) take the same credentials and answer errors as Sinch does. A call of
/// another application answers 404, exactly as a call that does not exist.
public final class RESTAPI: Sendable {
    /// The content type of `/metrics` (Prometheus text exposition format 0.0.4).
    public static let metricsContentType = "text/plain; version=0.0.4; charset=utf-8"
    /// The `WWW-Authenticate` challenge sent with every 401.
    public static let authenticateChallenge = #"Basic realm="parley""#
    /// The signaling WebSocket's path (docs/protocol.md); a request on it without an
    /// upgrade gets 426.
    static let webSocketPath = "/v1/ws"

    let store: StoreQueue
    let callControl: any CallControl
    private let metrics: ServerMetrics
    let clock: @Sendable () -> Int64
    private let log: ServerLog?
    private let executor: RESTTaskExecutor
    /// REST authentication failures by code, for `/metrics` (the signaling side's hello
    /// refusals are in `ServerMetrics`).
    private let authFailures = Mutex<[String: Int]>([:])
    private let setupRate = Mutex(RESTSetupRateWindow())
    private let cursorKey: RESTCursorKey

    /// - Parameters:
    ///   - clock: Unix milliseconds now (secret grace periods are checked against it).
    ///   - log: where request failures (500s, refused credentials) are logged; nil for none.
    ///   - cursorKey: authenticates the `GET /v1/calls` cursors; pass the server's
    ///     (`ParleyServer.restCursorKey`, kept in its data directory) so cursors outlive a
    ///     restart. The default is a random key of this instance's own.
    public init(store: StoreQueue, callControl: any CallControl, metrics: ServerMetrics,
                clock: @escaping @Sendable () -> Int64 = RESTAPI.wallClockMilliseconds, log: ServerLog? = nil,
                cursorKey: RESTCursorKey = RESTCursorKey()) {
        self.cursorKey = cursorKey
        self.store = store
        self.callControl = callControl
        self.metrics = metrics
        self.clock = clock
        self.log = log
        executor = RESTTaskExecutor()
    }

    /// The handler to install in the server: answers each request on a task, through the
    /// responder, since it waits on the store and the call engine. The tasks prefer the
    /// API's own executor (`RESTTaskExecutor`), so they do not depend on the shared pool.
    public var handler: HTTPHandler {
        { [self] request, _, responder in
            Task(executorPreference: executor) {
                responder.respond(await self.response(to: request))
            }
        }
    }

    /// The answer to one request (what `handler` sends).
    public func response(to request: HTTPRequest) async -> HTTPResponse {
        let path = request.path
        switch path {
        case "/healthz":
            guard isRead(request.method) else { return Self.methodNotAllowed(allow: "GET, HEAD") }
            return await health()
        case "/metrics":
            guard isRead(request.method) else { return Self.methodNotAllowed(allow: "GET, HEAD") }
            return await renderMetrics()
        default:
            break
        }
        if path == Self.webSocketPath {
            // Upgrades never reach this handler; anything else on the path is a client
            // that forgot to upgrade.
            var response = Self.error(426, "upgrade_required", "\(Self.webSocketPath) is the signaling WebSocket: upgrade with subprotocol parley.v1")
            try? response.headers.set(name: "Upgrade", value: "websocket")
            return response
        }
        if path.hasPrefix(Self.callingPrefix) {
            switch await authenticateCalling(request) {
            case .success(let key): return await callingResponse(to: request, applicationKey: key)
            case .failure(let failure): return Self.sinchShaped(failure.response)
            }
        }
        guard path == "/v1" || path.hasPrefix("/v1/") else {
            return Self.error(404, "not_found", "no resource at \(Self.printable(path))")
        }
        // Credentials first, so an unauthenticated client learns nothing about the routes.
        let applicationKey: String
        switch await authenticate(request) {
        case .success(let key): applicationKey = key
        case .failure(let failure): return failure.response
        }
        // "/v1/calls/{id}" splits into "", "v1", "calls", "{id}".
        let segments = Array(path.split(separator: "/", omittingEmptySubsequences: false).dropFirst(2))
        guard segments.first == "calls" else {
            return Self.error(404, "not_found", "no resource at \(Self.printable(path))")
        }
        switch segments.count {
        case 1:
            guard isRead(request.method) else { return Self.methodNotAllowed(allow: "GET, HEAD") }
            return await listCalls(query: request.query, applicationKey: applicationKey)
        case 2 where !segments[1].isEmpty:
            let callID = String(segments[1])
            switch request.method {
            case "GET", "HEAD": return await getCall(id: callID, applicationKey: applicationKey)
            case "DELETE": return await hangUp(id: callID, applicationKey: applicationKey)
            default: return Self.methodNotAllowed(allow: "GET, HEAD, DELETE")
            }
        default:
            return Self.error(404, "not_found", "no resource at \(Self.printable(path))")
        }
    }

    /// Unix milliseconds from the system clock (parleyd's one reading, `ServerClock`).
    public static let wallClockMilliseconds: @Sendable () -> Int64 = {
        ServerClock.now().unixMilliseconds
    }

    // MARK: Endpoints

    private func health() async -> HTTPResponse {
        do {
            // A real read: the answer says the store's file and queue are working.
            _ = try await store.perform { store throws(StoreError) in try store.callCountsByState(applicationKey: "") }
            return Self.json(200, ["status": "ok"])
        } catch {
            log?.error("rest.health", ["error": error.message])
            return Self.error(503, "store_unavailable", "the store did not answer: \(error.message)")
        }
    }

    private func renderMetrics() async -> HTTPResponse {
        let live = await callControl.liveCallCounts()
        let conferences = await callControl.conferenceStatistics()
        let counters = metrics.snapshot
        let now = clock()
        let rate = setupRate.withLock { $0.rate(count: counters.callsEstablished, at: now) }
        let text = MetricsRenderer.render(
            counters: counters, liveCalls: live, restAuthFailures: authFailures.withLock { $0 }, setupsPerSecond: rate,
            conferences: conferences)
        var headers = HTTPHeaders()
        try? headers.set(name: "Content-Type", value: Self.metricsContentType)
        return (try? HTTPResponse(status: 200, headers: headers, body: Array(text.utf8)))
            ?? HTTPResponse.text(status: 200, text)
    }

    private func getCall(id: String, applicationKey: String) async -> HTTPResponse {
        do {
            let found = try await store.perform { store throws(StoreError) -> CallWithTimeline? in
                guard let call = try store.call(id: id, applicationKey: applicationKey) else { return nil }
                return CallWithTimeline(call: call, timeline: try store.callEvents(callId: id, applicationKey: applicationKey))
            }
            guard let found else { return Self.callNotFound(id) }
            return Self.json(200, found)
        } catch {
            return storeFailure(error)
        }
    }

    private func listCalls(query: String?, applicationKey: String) async -> HTTPResponse {
        var callQuery: CallQuery
        switch RESTQueryParameters.callQuery(from: query, applicationKey: applicationKey) {
        case .success(let parsed): callQuery = parsed
        case .failure(let failure): return Self.error(400, "invalid_parameter", failure.message)
        }
        // Clients see the store's cursor sealed with this server's key and the query.
        if let cursor = callQuery.cursor {
            guard let storeCursor = cursorKey.open(cursor, for: callQuery) else {
                return Self.error(400, "invalid_parameter",
                                  "cursor \"\(Self.printable(cursor))\" was not issued by this server for this query (same user and since)")
            }
            callQuery.cursor = storeCursor
        }
        do {
            let query = callQuery
            var page = try await store.perform { store throws(StoreError) in try store.calls(query) }
            page.nextCursor = page.nextCursor.map { cursorKey.seal($0, for: callQuery) }
            return Self.json(200, page)
        } catch {
            return storeFailure(error)
        }
    }

    private func hangUp(id: String, applicationKey: String) async -> HTTPResponse {
        switch await callControl.hangUp(callID: id, applicationKey: applicationKey) {
        case .hungUp:
            return (try? HTTPResponse(status: 204)) ?? HTTPResponse.json(status: 204, body: [])
        case .notFound:
            return Self.callNotFound(id)
        case .alreadyEnded:
            return Self.error(409, "call_ended", "call \(Self.printable(id)) has already ended")
        }
    }

    // MARK: Authentication

    private struct AuthFailure: Error {
        let response: HTTPResponse
    }

    /// The application key of a `/calling/v1/` request: signed as Sinch signs requests
    /// (`Authorization: Application {key}:{signature}`, docs/rest.md "Signed requests"), or
    /// with Basic credentials as `/v1` is.
    private func authenticateCalling(_ request: HTTPRequest) async -> Result<String, AuthFailure> {
        let values = request.headers["Authorization"]
        guard values.count == 1, let value = values.first,
              value.prefix(12).lowercased() == "application " else {
            return await authenticate(request)
        }
        guard let key = SinchRequestVerifier.applicationKey(inAuthorization: value) else {
            return .failure(refuse("malformed_credentials", #"a signed request's Authorization is "Application {key}:{Base64 signature}""#))
        }
        let application: Application?
        do {
            application = try await store.perform { store throws(StoreError) in try store.application(key: key) }
        } catch {
            return .failure(AuthFailure(response: storeFailure(error)))
        }
        guard let application else { return .failure(refuse("bad_credentials", "the signature does not match the request")) }
        let headers = request.headers.fields.map { (name: $0.name, value: $0.value) }
        let now: SinchTimestamp
        do throws(VoiceAPIError) {
            now = try SinchTimestamp(unixMilliseconds: clock())
        } catch {
            return .failure(AuthFailure(response: Self.error(500, "internal_error", "the server's clock is out of range")))
        }
        var refusal: VoiceAPIError?
        // The current secret, and the previous one during its grace period.
        for secret in application.validSecrets(at: clock()) {
            do throws(VoiceAPIError) {
                let credentials = try SinchApplicationCredentials(applicationKey: application.key, applicationSecret: secret)
                _ = try SinchRequestVerifier(applications: [credentials])
                    .verify(method: request.method, path: request.target, headers: headers, body: request.body, now: now)
                return .success(application.key)
            } catch {
                if refusal == nil || refusal?.kind == .badSignature { refusal = error }
            }
        }
        switch refusal?.kind {
        case .staleTimestamp?, .missingTimestamp?, .invalidTimestamp?:
            return .failure(refuse("stale_request", refusal.map { "\($0)" } ?? "the request's x-timestamp is not within the replay window"))
        case .bodyDigestMismatch?:
            return .failure(refuse("bad_credentials", refusal.map { "\($0)" } ?? "Content-MD5 does not match the body"))
        default:
            return .failure(refuse("bad_credentials", "the signature does not match the request"))
        }
    }

    /// The application key of valid Basic credentials, or the 401 (or 500) to send.
    private func authenticate(_ request: HTTPRequest) async -> Result<String, AuthFailure> {
        let values = request.headers["Authorization"]
        guard values.count == 1, let value = values.first else {
            return .failure(refuse("missing_credentials",
                                   values.isEmpty ? "HTTP Basic credentials (application key and secret) are required"
                                                  : "more than one Authorization header"))
        }
        let credentials: BasicCredentials
        do {
            credentials = try BasicCredentials.parse(authorization: value)
        } catch {
            return .failure(refuse(error.kind == .badCredentials ? "bad_credentials" : "malformed_credentials", error.description))
        }
        let application: Application?
        do {
            application = try await store.perform { store throws(StoreError) in try store.application(key: credentials.applicationKey) }
        } catch {
            return .failure(AuthFailure(response: storeFailure(error)))
        }
        // One answer for an unknown key and a wrong secret.
        let refusal = "the application key and secret do not match"
        guard let application else { return .failure(refuse("bad_credentials", refusal)) }
        let accepted = application.validSecrets(at: clock())
        do {
            // The grace period was checked above at millisecond precision, so the previous
            // secret (if still valid) is given a far expiry and ParleyAuth only compares.
            let known = try ApplicationCredentials(
                key: application.key, secret: ApplicationSecret(base64: accepted[0]),
                previousSecret: accepted.count > 1 ? ApplicationSecret(base64: accepted[1]) : nil,
                previousSecretExpiresAt: accepted.count > 1 ? Int64.max : nil)
            try known.authenticate(credentials, now: 0)
        } catch where error.kind == .badCredentials {
            return .failure(refuse("bad_credentials", refusal))
        } catch {
            log?.error("rest.auth", ["app": application.key, "error": error.description])
            return .failure(AuthFailure(response: Self.error(500, "internal_error", "the stored credentials could not be read")))
        }
        return .success(application.key)
    }

    private func refuse(_ code: String, _ message: String) -> AuthFailure {
        authFailures.withLock { $0[code, default: 0] += 1 }
        log?.info("rest.auth_failed", ["code": code])
        var response = Self.error(401, code, message)
        try? response.headers.set(name: "WWW-Authenticate", value: Self.authenticateChallenge)
        return AuthFailure(response: response)
    }

    // MARK: Responses

    private func isRead(_ method: String) -> Bool { method == "GET" || method == "HEAD" }

    func storeFailure(_ error: StoreError) -> HTTPResponse {
        switch error.kind {
        case .invalidArgument:
            return Self.error(400, "invalid_parameter", error.message)
        case .notFound:
            return Self.error(404, "not_found", error.message)
        // A SQLite detail left on the port: SQLite's busy code (5) is what rest.md's 503 means.
        // Another adapter needs its own busy test here (isTransient would also cover I/O
        // errors and a full disk, which are 500 today).
        case .database where error.sqliteCode.map({ $0 & 0xFF == 5 }) ?? false:
            log?.warning("rest.store_busy", ["error": error.message])
            return Self.error(503, "store_busy", "the store is busy; try again")
        default:
            log?.error("rest.store_failed", ["error": error.description])
            return Self.error(500, "internal_error", "the store failed")
        }
    }

    private static func callNotFound(_ id: String) -> HTTPResponse {
        error(404, "call_not_found", "call \(printable(id)) not found")
    }

    private static func methodNotAllowed(allow: String) -> HTTPResponse {
        var response = error(405, "method_not_allowed", "allowed methods: \(allow)")
        try? response.headers.set(name: "Allow", value: allow)
        return response
    }

    /// `{"code": ..., "message": ...}` with `status`.
    static func error(_ status: Int, _ code: String, _ message: String) -> HTTPResponse {
        json(status, RESTError(code: code, message: message))
    }

    static func json(_ status: Int, _ value: some Encodable) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else {
            return HTTPResponse.json(status: 500, body: Array(#"{"code":"internal_error","message":"response encoding failed"}"#.utf8))
        }
        return HTTPResponse.json(status: status, body: Array(data))
    }

    /// `text` cut to 200 characters for error messages (paths and ids come from clients).
    static func printable(_ text: some StringProtocol) -> String {
        text.count <= 200 ? String(text) : String(text.prefix(200)) + "..."
    }
}

/// The JSON error body of every REST failure.
struct RESTError: Codable, Hashable {
    var code: String
    var message: String
}
