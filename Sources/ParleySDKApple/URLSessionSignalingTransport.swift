public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
public import ParleySDKCore

/// The signaling transport on Apple platforms: one `URLSessionWebSocketTask` to
/// `endpoint.webSocketURL` asking for the `parley.v1` subprotocol, TLS and proxies as
/// the system does them. It keeps the `ParleySignalingTransport` contract the Linux
/// transport keeps: `opened` (or `failed`) first, then messages, then at most one
/// `closed`/`failed`, nothing after a `close(code:)` the client asked for.
///
/// Compiled everywhere (swift-corelibs-foundation has the same API), but on Debian's
/// Foundation every task fails with `NSURLErrorDomain` -1002 (its libcurl has no
/// WebSocket support), so on Linux it is only seen failing cleanly; the Linux SDK uses its
/// own WebSocket client.
public final class URLSessionSignalingTransport: NSObject, ParleySignalingTransport, URLSessionWebSocketDelegate, @unchecked Sendable {
    // @unchecked: the mutable state is touched only on `queue` (the session's delegate
    // queue, serial), or under `lock` for `send` from other threads.

    /// How often the transport pings the server to find a dead connection (the server
    /// pings too; a mobile network can drop a connection without a FIN).
    public static let pingInterval: TimeInterval = 20

    private let endpoint: ParleyServerEndpoint
    private let handler: @Sendable (ParleySignalingTransportEvent) -> Void
    private let configuration: URLSessionConfiguration
    private let queue: OperationQueue
    private let lock = NSLock()
    private var session: URLSession?
    private var task: URLSessionWebSocketTask?
    private var isOpen = false
    /// Set once `opened`, `failed` or `closed` was reported, or the client asked to close.
    private var isDone = false
    private var closeRequested = false
    /// `open()` entered `finished`; `finish` leaves it once.
    private var started = false
    private var hasFinished = false
    private var pingTimer: (any DispatchSourceTimer)?

    public let finished = DispatchGroup()

    /// A transport for `endpoint`, reporting to `handler`; `configuration` sets timeouts,
    /// proxies and the like (default: `.default` with a 10 s request timeout).
    public init(endpoint: ParleyServerEndpoint, configuration: URLSessionConfiguration? = nil,
                handler: @escaping @Sendable (ParleySignalingTransportEvent) -> Void) {
        self.endpoint = endpoint
        self.handler = handler
        let chosen = configuration ?? URLSessionConfiguration.default
        if configuration == nil { chosen.timeoutIntervalForRequest = 10 }
        self.configuration = chosen
        queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "parley.sdk.urlsession-ws"
        super.init()
    }

    public func open() {
        finished.enter()
        queue.addOperation { [self] in
            started = true
            guard let url = URL(string: endpoint.webSocketURL) else {
                finish(.failed("\(endpoint.webSocketURL): not a URL"))
                return
            }
            let session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
            let task = session.webSocketTask(with: url, protocols: [ParleyServerEndpoint.subprotocol])
            // The signaling protocol's largest frame (docs/protocol.md) with room to spare.
            task.maximumMessageSize = 1 << 20
            lock.lock()
            self.session = session
            self.task = task
            lock.unlock()
            task.resume()
        }
    }

    @discardableResult
    public func send(_ text: String) -> Bool {
        lock.lock()
        let task = isOpen && !closeRequested ? self.task : nil
        lock.unlock()
        guard let task else { return false }
        task.send(.string(text)) { [weak self] error in
            // A failed send means the connection is going: the task's completion reports it.
            if error != nil { self?.task?.cancel(with: .abnormalClosure, reason: nil) }
        }
        return true
    }

    public func close(code: UInt16) {
        queue.addOperation { [self] in
            guard !closeRequested else { return }
            lock.lock()
            closeRequested = true
            let task = self.task
            lock.unlock()
            guard let task else {
                if started { finish(nil) }
                return
            }
            let closeCode = URLSessionWebSocketTask.CloseCode(rawValue: Int(code)) ?? .normalClosure
            task.cancel(with: closeCode, reason: nil)
            // The task completes once the close handshake is done or fails; `finish` then.
        }
    }

    // MARK: URLSessionWebSocketDelegate (on `queue`)

    public func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?) {
        guard !closeRequested else { return }
        guard `protocol` == ParleyServerEndpoint.subprotocol else {
            report(.failed("\(endpoint.webSocketURL): the server did not select \(ParleyServerEndpoint.subprotocol)"))
            webSocketTask.cancel(with: .protocolError, reason: nil)
            return
        }
        lock.lock()
        isOpen = true
        lock.unlock()
        handler(.opened(localHost: nil))
        receive(on: webSocketTask)
        startPinging(webSocketTask)
    }

    public func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask,
                           didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        let text = reason.map { String(decoding: $0, as: UTF8.self) } ?? ""
        report(.closed(code: UInt16(clamping: closeCode.rawValue), reason: text))
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let opened = isOpen
        if let error {
            report(opened ? .closed(code: 1006, reason: error.localizedDescription)
                          : .failed("\(endpoint.webSocketURL): \(error.localizedDescription)"))
        } else {
            report(opened ? .closed(code: 1005, reason: "") : .failed("\(endpoint.webSocketURL): the connection ended before it opened"))
        }
        finish(nil)
    }

    // MARK: Helpers (on `queue`)

    private func receive(on task: URLSessionWebSocketTask) {
        task.receive { [weak self] result in
            guard let self else { return }
            queue.addOperation { [self] in
                guard !isDone, !closeRequested else { return }
                switch result {
                case .success(.string(let text)):
                    handler(.message(Array(text.utf8)))
                case .success:
                    // protocol.md: text frames only; a binary frame from the server is dropped.
                    break
                case .failure:
                    // The task's completion says how the connection ended.
                    return
                }
                receive(on: task)
            }
        }
    }

    private func startPinging(_ task: URLSessionWebSocketTask) {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
        timer.schedule(deadline: .now() + Self.pingInterval, repeating: Self.pingInterval)
        timer.setEventHandler { [weak task] in
            guard let task else { return }
            task.sendPing { error in
                if error != nil { task.cancel(with: .abnormalClosure, reason: nil) }
            }
        }
        pingTimer = timer
        timer.resume()
    }

    /// Reports `event` unless something final was reported or the client asked to close.
    private func report(_ event: ParleySignalingTransportEvent) {
        guard !isDone, !closeRequested else { return }
        switch event {
        case .message, .opened: break
        case .failed, .closed: isDone = true
        }
        handler(event)
    }

    /// Ends the transport once: reports `event` (if any), stops pinging, lets go of the
    /// session and leaves `finished`.
    private func finish(_ event: ParleySignalingTransportEvent?) {
        if let event { report(event) }
        guard started, !hasFinished else { return }
        hasFinished = true
        isDone = true
        pingTimer?.cancel()
        pingTimer = nil
        lock.lock()
        isOpen = false
        let session = self.session
        self.session = nil
        self.task = nil
        lock.unlock()
        session?.finishTasksAndInvalidate()
        finished.leave()
    }
}
