import Dispatch
import Foundation
import ParleyPush
import ParleyStore
import ParleyVoiceAPI
import ParleyWireCore
import Synchronization

/// Calls an application's backend back (docs/backend.md): signed JSON POSTs in the Sinch
/// Voice v1 shape to the application's callback URL (`parleyd app callback set`). The ICE
/// of a call in to a number the backend routes is answered with SVAML; a DiCE when such a
/// call ends is sent and its answer ignored.
///
/// Every POST is signed as Sinch signs callbacks (`SinchRequestSigner`, the application's
/// key and current secret) and runs on a queue of its own: libcurl blocks, and the engine's
/// loop never waits on a backend. An application's posts share one HTTP client (HTTP/1.1 or
/// HTTP/2, as the backend offers), so consecutive callbacks reuse a connection.
final class BackendCallbacks: @unchecked Sendable {
    // @unchecked: `clients` is behind a Mutex; the rest is immutable.

    /// Why a callback got no usable answer: the DiCE `reason` it ends the call with and a
    /// line for the log.
    struct Failure: Error, Sendable {
        var reason: DisconnectReason
        var message: String
        /// The answer was a JSON object with no `action` (`{}`, an empty answer): an ACE
        /// answered so goes on.
        var noAction = false
    }

    let settings: CallbackSettingsSource
    private let store: StoreQueue
    private let log: ServerLog
    private let queue = DispatchQueue(label: "parley.backend", attributes: .concurrent)
    /// Posts in flight, bounded: a backend that hangs holds at most this many threads.
    private let inFlight = Mutex(0)
    static let maximumInFlight = 64
    /// One client per application and CA file.
    private let clients = Mutex<[String: HTTP2Client]>([:])

    init(settings: CallbackSettingsSource, store: StoreQueue, log: ServerLog) {
        self.settings = settings
        self.store = store
        self.log = log
    }

    /// Whether the application has a backend that takes `event`.
    func sends(_ event: ParleyVoiceAPI.CallbackEvent.Name, applicationKey: String) -> Bool {
        settings.settings(applicationKey: applicationKey)?.events.contains { $0.rawValue == event.rawValue } == true
    }

    /// POSTs `event` for `applicationKey` and hands `done` the backend's SVAML (for ICE, ACE,
    /// PIE) or a failure, on the backend queue. An application without callback settings
    /// fails at once (`callbackError`).
    func post(_ event: ParleyVoiceAPI.CallbackEvent, applicationKey: String, done: @escaping @Sendable (Result<SVAMLResponse?, Failure>) -> Void) {
        guard let settings = settings.settings(applicationKey: applicationKey) else {
            return done(.failure(Failure(reason: .callbackError, message: "the application has no callback URL")))
        }
        let admitted = inFlight.withLock { count -> Bool in
            guard count < Self.maximumInFlight else { return false }
            count += 1
            return true
        }
        guard admitted else {
            return done(.failure(Failure(reason: .callbackError, message: "\(Self.maximumInFlight) callbacks are in flight already")))
        }
        queue.async { [self] in
            defer { inFlight.withLock { $0 -= 1 } }
            done(send(event, applicationKey: applicationKey, settings: settings))
        }
    }

    private func send(_ event: ParleyVoiceAPI.CallbackEvent, applicationKey: String, settings: CallbackSettings) -> Result<SVAMLResponse?, Failure> {
        let secret: String
        do {
            guard let application = try store.performAndWait({ (store) throws(StoreError) in try store.application(key: applicationKey) }) else {
                return .failure(Failure(reason: .callbackError, message: "no application \(applicationKey)"))
            }
            secret = application.secret
        } catch {
            return .failure(Failure(reason: .callbackError, message: "the store: \(error)"))
        }
        let body = event.body
        let contentType = "application/json"
        let path = Self.path(of: settings.url)
        let signed: SignedRequest
        do {
            let credentials = try SinchApplicationCredentials(applicationKey: applicationKey, applicationSecret: secret)
            let now = try SinchTimestamp(unixMilliseconds: Int64(Date().timeIntervalSince1970 * 1000))
            signed = try SinchRequestSigner(credentials: credentials).sign(
                method: "POST", path: path, contentType: contentType, body: body, timestamp: now)
        } catch {
            return .failure(Failure(reason: .callbackError, message: "cannot sign: \(error)"))
        }
        var headers: [(name: String, value: String)] = [
            ("content-type", contentType), ("authorization", signed.authorization), ("x-timestamp", signed.timestamp),
        ]
        if let md5 = signed.contentMD5 { headers.append(("content-md5", md5)) }
        let response: HTTPResponse
        do {
            response = try client(applicationKey: applicationKey, settings: settings)
                .send(PushRequest(url: settings.url, headers: headers, body: body))
        } catch {
            log.warning("backend.callback.failed", ["app": applicationKey, "event": event.name.rawValue, "reason": "\(error)"])
            return .failure(Failure(reason: .callbackError, message: "\(event.name.rawValue) to \(settings.url): \(error)"))
        }
        log.info("backend.callback", ["app": applicationKey, "event": event.name.rawValue, "status": String(response.status)])
        guard (200..<300).contains(response.status) else {
            return .failure(Failure(reason: .callbackError, message: "\(event.name.rawValue) to \(settings.url): HTTP \(response.status)"))
        }
        guard event.expectsSVAML else { return .success(nil) }
        let context: SVAMLContext = switch event.name {
        case .ace: .ace
        case .pie: .pie
        default: .ice
        }
        do {
            return .success(try SVAMLResponse.decode(response.body, answering: context))
        } catch {
            let noAction = error.kind == .missingAction || response.body.allSatisfy { $0 == 0x20 || $0 == 0x0a || $0 == 0x0d || $0 == 0x09 }
            return .failure(Failure(reason: error.diceReason, message: "\(event.name.rawValue) answer: \(error)", noAction: noAction))
        }
    }

    private func client(applicationKey: String, settings: CallbackSettings) throws(PushError) -> HTTP2Client {
        let key = applicationKey + "|" + (settings.caFile ?? "") + "|" + String(settings.timeoutMilliseconds)
        if let client = clients.withLock({ $0[key] }) { return client }
        let client = try HTTP2Client(timeoutMilliseconds: settings.timeoutMilliseconds, caFile: settings.caFile, allowsHTTP1: true)
        clients.withLock { $0[key] = client }
        return client
    }

    /// The request target of `url` (its path and query), as the signature covers it.
    static func path(of url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return "/" }
        let rest = url[schemeEnd.upperBound...]
        guard let slash = rest.firstIndex(of: "/") else { return "/" }
        return String(rest[slash...])
    }
}
