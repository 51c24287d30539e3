public import ParleyNetCore
public import ParleyNetLinux
import ParleyCrypto
import ParleyHTTP
import Glibc
import Synchronization

/// Counters of an `EdgeServer` since it started (for `/metrics`), read at one moment.
public struct EdgeStatistics: Sendable, Hashable, Encodable {
    /// Connections accepted.
    public var accepted: Int
    /// Connections refused: answered 503 and closed (over `maxConnections`, or accepted
    /// into the descriptor reserve while the process had none to spare) or, on a TLS
    /// listener, closed unanswered.
    public var refused: Int
    /// `accept` calls that failed, nearly always for want of descriptors (`EMFILE`,
    /// `ENFILE`). Each failure stops the loop polling its listeners for
    /// `EdgeServer.acceptBackoff`, so this grows by a few per back-off, never in a spin.
    public var acceptFailures: Int
    /// Connections open now.
    public var open: Int
    /// HTTP requests parsed (including upgrade requests).
    public var httpRequests: Int
    /// Requests refused by the parser (400, 413, 414, 431, 501, 505).
    public var httpErrors: Int
    /// WebSockets opened.
    public var webSocketsOpened: Int
    /// WebSockets closed.
    public var webSocketsClosed: Int
    /// WebSocket messages received and delivered.
    public var messagesReceived: Int
    /// WebSocket messages sent.
    public var messagesSent: Int
    /// WebSockets over the message rate: closed with `rateLimitCloseCode` by the edge, or
    /// handed to the route's `onRateLimited` to close.
    public var rateLimited: Int
    /// Connections closed by the handshake or idle timeout.
    public var timeouts: Int
    /// Connections accepted on the TLS listeners (also counted in `accepted`).
    public var tlsAccepted: Int
    /// TLS handshakes that failed (plain HTTP or garbage on the TLS port, no common
    /// version or cipher, ...); those connections were closed.
    public var tlsHandshakeFailures: Int
}

/// The live counters behind `EdgeStatistics`.
final class EdgeCounters: Sendable {
    let accepted = Atomic<Int>(0)
    let refused = Atomic<Int>(0)
    let acceptFailures = Atomic<Int>(0)
    let open = Atomic<Int>(0)
    let httpRequests = Atomic<Int>(0)
    let httpErrors = Atomic<Int>(0)
    let webSocketsOpened = Atomic<Int>(0)
    let webSocketsClosed = Atomic<Int>(0)
    let messagesReceived = Atomic<Int>(0)
    let messagesSent = Atomic<Int>(0)
    let rateLimited = Atomic<Int>(0)
    let timeouts = Atomic<Int>(0)
    let tlsAccepted = Atomic<Int>(0)
    let tlsHandshakeFailures = Atomic<Int>(0)

    func snapshot() -> EdgeStatistics {
        EdgeStatistics(accepted: accepted.load(ordering: .relaxed), refused: refused.load(ordering: .relaxed), acceptFailures: acceptFailures.load(ordering: .relaxed), open: open.load(ordering: .relaxed), httpRequests: httpRequests.load(ordering: .relaxed), httpErrors: httpErrors.load(ordering: .relaxed), webSocketsOpened: webSocketsOpened.load(ordering: .relaxed), webSocketsClosed: webSocketsClosed.load(ordering: .relaxed), messagesReceived: messagesReceived.load(ordering: .relaxed), messagesSent: messagesSent.load(ordering: .relaxed), rateLimited: rateLimited.load(ordering: .relaxed), timeouts: timeouts.load(ordering: .relaxed), tlsAccepted: tlsAccepted.load(ordering: .relaxed), tlsHandshakeFailures: tlsHandshakeFailures.load(ordering: .relaxed))
    }
}

/// The HTTP/1.1 and WebSocket edge of `parleyd`: listeners on every loop of an
/// `EventLoopGroup` (`SO_REUSEPORT`, so the kernel spreads connections), each connection
/// served on the loop that accepted it.
///
/// ```swift
/// let server = try EdgeServer(
///     configuration: EdgeConfiguration(listenAddresses: [try SocketAddress(parsing: "127.0.0.1:8080")]),
///     handlers: EdgeHandlers(
///         http: { request, _ in request.path == "/healthz" ? .text(status: 200, "ok\n") : .text(status: 404, "") },
///         webSocket: WebSocketRoute(path: "/v1/ws", onMessage: { socket, message in socket.send(message) })))
/// // ...
/// server.shutdown()
/// ```
public final class EdgeServer: Sendable {
    /// The configuration it was started with.
    public let configuration: EdgeConfiguration
    /// The handlers it calls.
    public let handlers: EdgeHandlers
    /// The loops serving connections.
    public let group: EventLoopGroup
    /// Bound listening addresses, one per configured address (ports filled in).
    public let localAddresses: [SocketAddress]
    /// Bound TLS listening addresses, one per `configuration.tls` address (ports filled in).
    public let tlsLocalAddresses: [SocketAddress]
    let counters = EdgeCounters()

    /// The counters now.
    public var statistics: EdgeStatistics { counters.snapshot() }

    private let ownsGroup: Bool
    private let loopStates: [LoopState]
    private let nextConnectionID = Atomic<UInt64>(1)
    private let stopped = Atomic<Bool>(false)
    private let tlsContext: TLSContext?

    /// How long a loop stops polling its listeners after `accept` failed (out of
    /// descriptors, or another error that a retry at once would only repeat). The
    /// listeners are level-triggered: without the pause a pending connection that cannot
    /// be accepted wakes the loop again at once, forever.
    public static let acceptBackoff: Duration = .milliseconds(50)

    /// Per-loop state, touched only on that loop (`@unchecked Sendable` for that reason).
    final class LoopState: @unchecked Sendable {
        let loop: EventLoop
        let readBuffer = TCPReadBuffer()
        var listeners: [TCPListener] = []
        var tlsListeners: [TCPListener] = []
        var connections: [UInt64: EdgeConnection] = [:]
        /// The reserve: `/dev/null` held open so that when the process is out of
        /// descriptors one can be freed to accept a pending connection and refuse it
        /// cleanly (503) instead of leaving it in the backlog. -1 while not held.
        var spareDescriptor: Int32 = -1
        /// Set while the listeners are not polled (`acceptBackoff`).
        var listenersPaused = false
        init(loop: EventLoop) { self.loop = loop }

        /// Opens the reserve if it is not held; false if the process has no descriptor for it.
        @discardableResult
        func holdSpareDescriptor() -> Bool {
            if spareDescriptor < 0 { spareDescriptor = open("/dev/null", O_RDONLY | O_CLOEXEC) }
            return spareDescriptor >= 0
        }

        /// Closes the reserve; false if none was held.
        func releaseSpareDescriptor() -> Bool {
            guard spareDescriptor >= 0 else { return false }
            Glibc.close(spareDescriptor)
            spareDescriptor = -1
            return true
        }

        deinit { _ = releaseSpareDescriptor() }
    }

    /// Starts listening. With `group` nil the server creates (and on shutdown stops) its
    /// own group of `configuration.loopCount` loops. Throws `EdgeError` (e.g. address in use).
    public init(configuration: EdgeConfiguration, handlers: EdgeHandlers, group: EventLoopGroup? = nil) throws(EdgeError) {
        self.configuration = configuration
        self.handlers = handlers
        guard !configuration.listenAddresses.isEmpty else { throw .invalidArgument("no listen address") }
        if let tls = configuration.tls {
            guard !tls.listenAddresses.isEmpty else { throw .invalidArgument("TLS is configured without a listen address") }
            // Loaded once: every TLS connection shares the context (and its parsed key).
            do {
                tlsContext = try TLSContext.server(certificateChainFile: tls.certificateChainFile, privateKeyFile: tls.privateKeyFile)
            } catch {
                throw .tls(error)
            }
        } else {
            tlsContext = nil
        }
        do {
            if let group {
                self.group = group
                ownsGroup = false
            } else {
                self.group = try EventLoopGroup(loopCount: configuration.loopCount, namePrefix: "parley-edge")
                ownsGroup = true
            }
        } catch {
            throw .network(error)
        }
        let states = self.group.loops.map(LoopState.init)
        loopStates = states
        // Bind every listener before any loop accepts; the first bind of port 0 picks the
        // port the others share.
        var listenersPerLoop: [[TCPListener]] = Array(repeating: [], count: states.count)
        var tlsListenersPerLoop: [[TCPListener]] = Array(repeating: [], count: states.count)
        func bind(_ addresses: [SocketAddress], into perLoop: inout [[TCPListener]]) throws(NetError) -> [SocketAddress] {
            var bound: [SocketAddress] = []
            for address in addresses {
                var actual = address
                for index in states.indices {
                    let listener = try TCPListener(bindingTo: actual, reusePort: true)
                    actual = listener.localAddress
                    perLoop[index].append(listener)
                }
                bound.append(actual)
            }
            return bound
        }
        do {
            localAddresses = try bind(configuration.listenAddresses, into: &listenersPerLoop)
            tlsLocalAddresses = try bind(configuration.tls?.listenAddresses ?? [], into: &tlsListenersPerLoop)
        } catch {
            for listeners in listenersPerLoop + tlsListenersPerLoop { for listener in listeners { listener.close() } }
            if ownsGroup { self.group.shutdown() }
            throw .network(error)
        }
        for (index, state) in states.enumerated() {
            let listeners = listenersPerLoop[index]
            let tlsListeners = tlsListenersPerLoop[index]
            state.loop.execute { [self] in
                state.listeners = listeners
                state.tlsListeners = tlsListeners
                state.holdSpareDescriptor()
                for (listener, isTLS) in listeners.map({ ($0, false) }) + tlsListeners.map({ ($0, true) }) {
                    do {
                        try state.loop.register(listener, closeOnShutdown: true, onReadable: { [self] in
                            self.acceptConnections(on: listener, state: state, tls: isTLS)
                        })
                    } catch {
                        listener.close()
                    }
                }
            }
        }
    }

    /// Connections open now, over all loops.
    public var connectionCount: Int { counters.open.load(ordering: .relaxed) }

    private func acceptConnections(on listener: TCPListener, state: LoopState, tls: Bool) {
        // Bounded per wake-up so one busy listener cannot starve the loop's connections.
        for _ in 0..<64 {
            let socket: TCPSocket
            do {
                guard let accepted = try listener.accept() else { return }
                socket = accepted
            } catch {
                // EMFILE / ENFILE: the process (or system) is out of descriptors and the
                // connection stays queued. Refuse the first one queued through the
                // reserve, then try a plain accept again: descriptors may have come back
                // meanwhile, and a client that could be served must not get a 503. When
                // nothing could be refused, stop polling for a while rather than retry in
                // a spin. Other accept errors would repeat just as fast, so they pause too.
                counters.acceptFailures.add(1, ordering: .relaxed)
                if error.errno == EMFILE || error.errno == ENFILE,
                   refuseOnePendingThroughReserve(on: listener, state: state, tls: tls) {
                    continue
                }
                pauseListeners(state)
                return
            }
            // A descriptor from the process's headroom (DescriptorHeadroom): answered as when
            // out of descriptors, so that the last few stay free for libdispatch, SQLite
            // and libcurl, which cannot fail cleanly.
            if DescriptorHeadroom.encroaches(on: socket.fileDescriptor) {
                refuse(socket, tls: tls, response: Self.exhaustedRefusal)
                continue
            }
            if stopped.load(ordering: .acquiring) || counters.open.load(ordering: .relaxed) >= configuration.maxConnections {
                refuse(socket, tls: tls, response: Self.fullRefusal)
                continue
            }
            let id = nextConnectionID.wrappingAdd(1, ordering: .relaxed).oldValue
            let tcp = TCPConnection(socket: socket, loop: state.loop, readBuffer: state.readBuffer, configuration: configuration.connection)
            var session: TLSConnection?
            if tls, let tlsContext {
                do {
                    session = try TLSConnection(context: tlsContext)
                } catch {
                    counters.tlsHandshakeFailures.add(1, ordering: .relaxed)
                    socket.close()
                    continue
                }
                counters.tlsAccepted.add(1, ordering: .relaxed)
            }
            let transport = EdgeTransport(tcp: tcp, tls: session, onHandshakeFailure: { [counters] _ in
                counters.tlsHandshakeFailures.add(1, ordering: .relaxed)
            })
            let connection = EdgeConnection(id: id, tcp: transport, server: self)
            counters.open.add(1, ordering: .relaxed)
            counters.accepted.add(1, ordering: .relaxed)
            state.connections[id] = connection
            do {
                try connection.start()
            } catch {
                state.connections[id] = nil
                counters.open.subtract(1, ordering: .relaxed)
            }
        }
    }

    /// 503 for a connection over `maxConnections`.
    static let fullRefusal = refusal("the server has its maximum number of connections; retry later")
    /// 503 for a connection accepted into the descriptor reserve.
    static let exhaustedRefusal = refusal("the server is out of file descriptors; retry later")

    private static func refusal(_ message: String) -> [UInt8] {
        var response = HTTPResponse.jsonError(status: 503, message: message)
        try? response.headers.set(name: "Retry-After", value: "5")
        return response.serialized(keepAlive: false)
    }

    /// Answers `socket` with `response` (a 503) and closes it at once, before reading its
    /// request, so it costs its descriptor only for these few system calls. The answer
    /// also serves a WebSocket upgrade (a client sees the 503 instead of a 101). A TLS
    /// connection is closed unanswered: plain text would be garbage to it.
    private func refuse(_ socket: TCPSocket, tls: Bool, response: [UInt8]) {
        counters.refused.add(1, ordering: .relaxed)
        if !tls {
            _ = try? socket.write(response)
            // FIN after the answer, and drop what the request has delivered so far: a
            // close with unread input would send a reset that can destroy the answer.
            socket.shutdownWrite()
            var scratch = [UInt8](repeating: 0, count: 4096)
            _ = try? socket.read(into: &scratch)
        }
        socket.close()
    }

    /// Out of descriptors: frees the loop's reserve, accepts one pending connection into
    /// it, refuses it with 503 and takes the reserve back. False when nothing was refused:
    /// the reserve was not held, another thread took the freed descriptor first, or the
    /// queue was empty. One at a time, so that the caller's next plain accept serves the
    /// following client if descriptors have come back in between.
    private func refuseOnePendingThroughReserve(on listener: TCPListener, state: LoopState, tls: Bool) -> Bool {
        guard state.releaseSpareDescriptor() else { return false }
        let pending: TCPSocket?
        do {
            pending = try listener.accept()
        } catch {
            counters.acceptFailures.add(1, ordering: .relaxed)
            pending = nil
        }
        if let pending { refuse(pending, tls: tls, response: Self.exhaustedRefusal) }
        state.holdSpareDescriptor()
        return pending != nil
    }

    /// Stops polling this loop's listeners for `acceptBackoff`; pending connections wait in
    /// the kernel's backlog meanwhile. On resuming the loop takes its reserve back first.
    private func pauseListeners(_ state: LoopState) {
        guard !state.listenersPaused else { return }
        state.listenersPaused = true
        for listener in state.listeners + state.tlsListeners {
            try? state.loop.setInterest(listener, readable: false, writable: false)
        }
        state.loop.schedule(after: Self.acceptBackoff) { [self] in
            state.listenersPaused = false
            // After shutdown the listeners are closed and gone from the state; a descriptor
            // number they had may belong to another socket by now, so only these are touched.
            guard !stopped.load(ordering: .acquiring) else { return }
            state.holdSpareDescriptor()
            for listener in state.listeners + state.tlsListeners {
                try? state.loop.setInterest(listener, readable: true, writable: false)
            }
        }
    }

    func connectionClosed(_ connection: EdgeConnection) {
        guard let state = loopStates.first(where: { $0.loop === connection.tcp.loop }) else { return }
        if state.connections.removeValue(forKey: connection.id) != nil {
            counters.open.subtract(1, ordering: .relaxed)
        }
    }

    /// Stops accepting, closes every connection (WebSockets with 1001 "going away" after
    /// their queued messages), waits up to `gracePeriod` for them to finish, then stops
    /// the loops if the server created them. Idempotent; call from outside the loops.
    public func shutdown(gracePeriod: Duration = .seconds(2)) {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for state in loopStates {
            state.loop.execute {
                for listener in state.listeners + state.tlsListeners {
                    state.loop.deregister(listener)
                    listener.close()
                }
                state.listeners = []
                state.tlsListeners = []
                _ = state.releaseSpareDescriptor()
                for connection in Array(state.connections.values) { connection.shutdown() }
            }
        }
        let deadline = ContinuousClock.now.advanced(by: gracePeriod)
        while counters.open.load(ordering: .relaxed) > 0 && ContinuousClock.now < deadline {
            usleep(2000)
        }
        if ownsGroup { group.shutdown() }
    }
}
