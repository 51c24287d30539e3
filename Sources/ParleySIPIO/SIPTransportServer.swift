import ParleyCrypto
public import ParleyNetCore
public import ParleyNetLinux
public import ParleySIP
import Glibc
import Synchronization

/// SIP's transport layer (RFC 3261 §18): UDP and TCP on one address and port, and TLS
/// (§26.2) on a second port when configured, on an event loop thread of its own
/// (`parley-sip`).
///
/// Received: each UDP datagram is one message; each TCP connection, and each TLS
/// connection once decrypted, is framed by `SIPStreamFramer`, its RFC 5626 keepalives
/// answered (CRLF CRLF gets CRLF). A message
/// that parses and validates goes to the `delegate`, a request with its top Via stamped
/// with `received` and `rport` (§18.2.1, RFC 3581). One that fails is answered as
/// `SIPError.disposition` says (400 with the reason, 416, 505, 513...) or dropped, and
/// counted; a TCP stream that loses its framing is closed, alone. Requests over their
/// source's rate limit (`SIPSourceRateLimit`) get 503 with Retry-After, or are dropped.
///
/// Sent: `sendResponse(_:to:)` follows §18.2.2 (the request's connection, else the Via's
/// `received` and `rport`); `send(_:to:transport:serverName:tcpAllowed:)` sends over UDP,
/// or over a TCP or TLS connection to the destination, reused or opened, and moves a
/// request over 1300 bytes from UDP to TCP (§18.1.1). A TLS connection it opens verifies
/// the peer's certificate against the configured CAs (or the system's) and the name or
/// address it was asked to reach; a message that cannot go out over TLS is reported to the
/// delegate (`transport(_:couldNotSend:to:reason:)`).
///
/// Limits: `SIPTransportConfiguration` (message size, connections in all and per source,
/// idle and message timeouts, the TLS handshake timeout, write queues, the rate limit).
/// Nothing the peer sends can make it allocate without bound, block the loop, or stop
/// serving other peers: garbage on the TLS port, or a handshake that stalls, closes that
/// connection alone.
///
/// Threads: the delegate runs on the loop; `send` and `sendResponse` may be called from
/// any thread; `shutdown()` from any thread but the loop's.
public final class SIPTransportServer: @unchecked Sendable {
    // @unchecked Sendable: the `let`s are immutable and Sendable; every `var` below them is
    // touched on `loop` only (socket callbacks, timers, closures hopped there).

    /// The settings it runs with.
    public let configuration: SIPTransportConfiguration
    /// The bound address (the port chosen when the configuration asked for port 0), for
    /// both UDP and TCP.
    public let localAddress: SocketAddress
    /// The bound TLS address (the port chosen for port 0); nil without TLS.
    public let tlsLocalAddress: SocketAddress?
    /// The loop every socket, timer and delegate call runs on.
    public let loop: EventLoop
    let counters = SIPTransportCounters()
    private let stopped = Atomic<Bool>(false)

    private let udp: UDPSocket
    private let listener: TCPListener
    private let tlsListener: TCPListener?
    /// The TLS contexts, loaded once: the certificate presented on the TLS listener, and
    /// the trust store connections this server opens verify their peers with.
    private let tlsServer: TLSContext?
    private let tlsClient: TLSContext?
    private let batch = UDPReceiveBatch(capacity: 8, slotSize: 65_536)
    private let readBuffer = TCPReadBuffer()
    private var delegate: (any SIPTransportDelegate)?
    private var limiter: SIPSourceRateLimiter
    private var connections: [UInt64: SIPStreamConnection] = [:]
    private var connectionsPerSource: [SocketAddress: Int] = [:]
    /// The TCP connection to each peer address, for reuse when sending there.
    private var streamsByRemote: [SocketAddress: UInt64] = [:]
    /// The TLS connections this server opened, by address and verified name, for reuse.
    /// (An accepted TLS connection authenticated only this server, so requests to its
    /// peer do not go over it; its responses do.)
    private var secureStreams: [SecureDestination: UInt64] = [:]
    private var nextConnectionID: UInt64 = 1
    private var acceptPaused = false

    /// How long the listener is not polled after `accept` failed (out of descriptors): it
    /// is level-triggered, and would otherwise wake the loop in a spin.
    static let acceptBackoff: Duration = .milliseconds(50)
    /// The largest UDP payload (65,535 bytes less the IP and UDP headers).
    static let maxDatagram = 65_507

    /// The counters now.
    public var statistics: SIPTransportStatistics { counters.snapshot() }

    /// Where a TLS connection this server opened goes: the address, and the name or
    /// address its peer's certificate was verified for.
    private struct SecureDestination: Hashable {
        var address: SocketAddress
        var serverName: String
    }

    /// Binds UDP and TCP on `configuration.listenAddress` (and the TLS listener when
    /// `configuration.tls` is set), starts the loop and starts serving. The server keeps
    /// `delegate` until `shutdown()`.
    /// Throws `SIPTransportError`: `.network` (e.g. the address is in use), `.tls` (the
    /// certificate, key or CA file cannot be used).
    public init(configuration: SIPTransportConfiguration, delegate: any SIPTransportDelegate) throws(SIPTransportError) {
        self.configuration = configuration
        self.delegate = delegate
        limiter = SIPSourceRateLimiter(limit: configuration.rateLimit)
        if let tls = configuration.tls {
            // Loaded before any socket: a bad file fails the start, not the first call.
            do {
                tlsServer = try TLSContext.server(certificateChainFile: tls.certificateChainFile, privateKeyFile: tls.privateKeyFile)
                tlsClient = try TLSContext.client(caFile: tls.caFile)
            } catch {
                throw .tls(error)
            }
        } else {
            tlsServer = nil
            tlsClient = nil
        }
        do {
            (udp, listener) = try Self.bind(configuration.listenAddress)
        } catch {
            throw .network(error)
        }
        localAddress = udp.localAddress
        if let tls = configuration.tls {
            do {
                let secure = try TCPListener(bindingTo: tls.listenAddress, backlog: 256)
                tlsListener = secure
                tlsLocalAddress = secure.localAddress
            } catch {
                udp.close()
                listener.close()
                throw .network(error)
            }
        } else {
            tlsListener = nil
            tlsLocalAddress = nil
        }
        do {
            loop = try EventLoop(name: configuration.threadName)
        } catch {
            udp.close()
            listener.close()
            tlsListener?.close()
            throw .network(error)
        }
        loop.execute { [self] in
            do {
                try loop.register(udp, closeOnShutdown: true, onReadable: { [self] in readDatagrams() })
                try loop.register(listener, closeOnShutdown: true, onReadable: { [self] in acceptConnections(on: listener) })
                if let tlsListener {
                    try loop.register(tlsListener, closeOnShutdown: true, onReadable: { [self] in acceptConnections(on: tlsListener) })
                }
            } catch {
                // Only a stopped loop refuses registrations; the sockets go with it.
                udp.close()
                listener.close()
                tlsListener?.close()
            }
        }
    }

    /// A UDP socket and a TCP listener on one port. With port 0 the UDP socket picks it;
    /// if TCP finds that port taken, another is tried.
    private static func bind(_ address: SocketAddress) throws(NetError) -> (UDPSocket, TCPListener) {
        var attempts = address.port == 0 ? 8 : 1
        while true {
            attempts -= 1
            let udp = try UDPSocket(bindingTo: address, options: UDPSocket.Options(receiveBufferSize: 1 << 20))
            do {
                let listener = try TCPListener(bindingTo: udp.localAddress, backlog: 256)
                return (udp, listener)
            } catch {
                udp.close()
                guard error.isAddressInUse, attempts > 0 else { throw error }
            }
        }
    }

    /// Stops listening, closes every connection and stops the loop; the delegate is
    /// released. Idempotent; must not be called on the loop.
    public func shutdown() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = loop.runAndWait { [self] in
            loop.deregister(udp)
            udp.close()
            loop.deregister(listener)
            listener.close()
            if let tlsListener {
                loop.deregister(tlsListener)
                tlsListener.close()
            }
            for connection in Array(connections.values) { connection.close(graceful: false) }
            delegate = nil
        }
        loop.shutdown()
    }

    /// TCP and TLS connections open now. Blocks until the loop answers; for tests and diagnostics.
    public var connectionCount: Int { loop.runAndWait { [self] in connections.count } ?? 0 }

    // MARK: Sending

    /// Sends a response to a request received from `source` (RFC 3261 §18.2.2 with RFC
    /// 3581): over the connection the request came on while it is open, else to the top
    /// Via's `received` address and `rport` (UDP) or a new connection to its `received`
    /// address and sent-by port (TCP; TLS verifying the sent-by host). Any thread.
    public func sendResponse(_ response: SIPMessage, to source: SIPMessageSource) {
        onLoop { [self] in routeResponse(response, to: source) }
    }

    /// Sends `message` to `destination`: over UDP from the listening socket, or over TCP
    /// or TLS on the connection open to that address or a new one. A request for UDP
    /// longer than `largeRequestThreshold` goes over TCP instead when `tcpAllowed` (the
    /// destination takes TCP), its top Via's transport changed to TCP (§18.1.1); if that
    /// connection is refused or cannot be established in time, it goes over UDP after all.
    /// Over TLS the peer's certificate must verify for `serverName` (a host name, or an
    /// IP address for its IP subject alternative names; nil: `destination`'s address),
    /// and a connection is reused only for the same address and name. Any thread;
    /// problems are counted as dropped (`unroutable`, `sendFailed`), and over TLS also
    /// reported to the delegate.
    public func send(_ message: SIPMessage, to destination: SocketAddress, transport: SIPTransport, serverName: String? = nil,
                     tcpAllowed: Bool = true) {
        onLoop { [self] in
            sendNow(message, to: destination, transport: transport, serverName: serverName, tcpAllowed: tcpAllowed)
        }
    }

    private func onLoop(_ work: @escaping @Sendable () -> Void) {
        if loop.inEventLoop {
            work()
        } else if stopped.load(ordering: .acquiring) || !loop.execute(work) {
            counters.countDropped(.sendFailed)
        }
    }

    private func sendNow(_ message: SIPMessage, to destination: SocketAddress, transport: SIPTransport, serverName: String?,
                         tcpAllowed: Bool) {
        let bytes = message.serialized()
        switch transport {
        case .udp where message.isRequest && tcpAllowed && bytes.count > configuration.largeRequestThreshold:
            var moved = message
            if let via = try? moved.topVia(), via.transport.uppercased() == SIPTransport.udp.viaToken,
               let streamVia = try? SIPVia(transport: SIPTransport.tcp.viaToken, host: via.host, port: via.port, parameters: via.parameters) {
                try? SIPViaStamp.replaceTopVia(of: &moved, with: streamVia)
            }
            sendOverStream(moved.serialized(), to: destination, fallback: bytes)
        case .udp:
            sendDatagram(bytes, to: destination)
        case .tcp:
            sendOverStream(bytes, to: destination, fallback: nil)
        case .tls:
            sendOverTLS(message, bytes, to: SecureDestination(address: destination, serverName: serverName ?? destination.hostDescription))
        }
    }

    private func routeResponse(_ response: SIPMessage, to source: SIPMessageSource) {
        let open = source.connectionID.flatMap { connections[$0] }?.isOpen ?? false
        switch SIPResponseRoute.resolve(topVia: try? response.topVia(), source: source, connectionOpen: open) {
        case .connection(let id):
            guard let connection = connections[id] else { counters.countDropped(.sendFailed); return }
            if connection.write(response.serialized(), message: response) {
                counters.countSent(connection.transport)
            } else {
                counters.countDropped(.sendFailed)
            }
        case .stream(let address):
            sendOverStream(response.serialized(), to: address, fallback: nil)
        case .secureStream(let address, let serverName):
            sendOverTLS(response, response.serialized(), to: SecureDestination(address: address, serverName: serverName))
        case .datagram(let address):
            sendDatagram(response.serialized(), to: address)
        case .unroutable:
            counters.countDropped(.unroutable)
        }
    }

    private func sendDatagram(_ bytes: [UInt8], to destination: SocketAddress) {
        guard destination.family == localAddress.family else {
            counters.countDropped(.unroutable)
            return
        }
        guard bytes.count <= Self.maxDatagram else {
            counters.countDropped(.sendFailed)
            return
        }
        do {
            if try udp.send(bytes, to: destination) {
                counters.countSent(.udp)
            } else {
                counters.countDropped(.sendFailed)
            }
        } catch {
            counters.countDropped(.sendFailed)
        }
    }

    /// Writes `bytes` on the connection open to `destination`, or opens one. `fallback`:
    /// the same request for UDP, sent that way if a new connection is never established.
    private func sendOverStream(_ bytes: [UInt8], to destination: SocketAddress, fallback: [UInt8]?) {
        if let id = streamsByRemote[destination], let connection = connections[id], connection.isOpen {
            if let fallback { connection.addFallback(fallback, to: destination) }
            if connection.write(bytes) { counters.countSent(.tcp) } else { counters.countDropped(.sendFailed) }
            return
        }
        guard !stopped.load(ordering: .acquiring), connections.count < configuration.maxConnections else {
            if let fallback { sendDatagram(fallback, to: destination) } else { counters.countDropped(.sendFailed) }
            return
        }
        let socket: TCPSocket
        do {
            socket = try TCPSocket.startConnecting(to: destination)
        } catch {
            if let fallback { sendDatagram(fallback, to: destination) } else { counters.countDropped(.sendFailed) }
            return
        }
        guard let connection = open(socket, outbound: true, tls: nil) else {
            if let fallback { sendDatagram(fallback, to: destination) } else { counters.countDropped(.sendFailed) }
            return
        }
        counters.connectionsOpened.add(1, ordering: .relaxed)
        if let fallback { connection.addFallback(fallback, to: destination) }
        if connection.write(bytes) { counters.countSent(.tcp) } else { counters.countDropped(.sendFailed) }
    }

    /// Writes `message` (as `bytes`) on the TLS connection this server opened to the
    /// destination, or opens one; a message that cannot go out is reported.
    private func sendOverTLS(_ message: SIPMessage, _ bytes: [UInt8], to destination: SecureDestination) {
        if let id = secureStreams[destination], let connection = connections[id], connection.isOpen {
            if connection.write(bytes, message: message) { counters.countSent(.tls) } else { counters.countDropped(.sendFailed) }
            return
        }
        guard let tlsClient else {
            counters.countDropped(.unroutable)
            reportUndelivered([message], to: destination.address, reason: "SIP over TLS is not configured")
            return
        }
        guard !stopped.load(ordering: .acquiring), connections.count < configuration.maxConnections else {
            counters.countDropped(.sendFailed)
            reportUndelivered([message], to: destination.address, reason: "no connection can be opened (\(connections.count) open)")
            return
        }
        let session: TLSConnection
        do {
            session = try TLSConnection(context: tlsClient, serverName: destination.serverName)
        } catch {
            counters.countDropped(.unroutable)
            reportUndelivered([message], to: destination.address, reason: "cannot verify \(destination.serverName): \(error)")
            return
        }
        let socket: TCPSocket
        do {
            socket = try TCPSocket.startConnecting(to: destination.address)
        } catch {
            counters.countDropped(.sendFailed)
            reportUndelivered([message], to: destination.address, reason: "cannot connect: \(error)")
            return
        }
        guard let connection = open(socket, outbound: true, tls: session) else {
            counters.countDropped(.sendFailed)
            reportUndelivered([message], to: destination.address, reason: "cannot connect")
            return
        }
        counters.connectionsOpened.add(1, ordering: .relaxed)
        if connection.write(bytes, message: message) { counters.countSent(.tls) } else { counters.countDropped(.sendFailed) }
    }

    /// Tells the delegate, on a later turn of the loop (never from inside its own `send`).
    private func reportUndelivered(_ messages: [SIPMessage], to destination: SocketAddress, reason: String) {
        guard !messages.isEmpty else { return }
        loop.execute { [self] in
            guard let delegate else { return }
            for message in messages { delegate.transport(self, couldNotSend: message, to: destination, reason: reason) }
        }
    }

    // MARK: Receiving over UDP

    private func readDatagrams() {
        // A few batches per wake-up, then the connections and timers get their turn.
        for _ in 0..<8 {
            let count: Int
            do {
                count = try udp.receive(into: batch)
            } catch {
                return
            }
            for index in 0..<count {
                let source = batch.source(at: index)
                if batch.isTruncated(at: index) {
                    counters.countReceived(.udp)
                    counters.countDropped(.overLimit)
                    continue
                }
                datagramReceived(Array(batch.payload(at: index)), from: source)
            }
            if count < batch.capacity { return }
        }
    }

    private func datagramReceived(_ bytes: [UInt8], from remote: SocketAddress) {
        // Line breaks alone: a keepalive some UAs send over UDP (RFC 5626 uses STUN there,
        // which is not answered here and counts as malformed).
        guard bytes.contains(where: { $0 != 0x0d && $0 != 0x0a }) else {
            if !bytes.isEmpty { counters.keepalives.add(1, ordering: .relaxed) }
            return
        }
        let source = SIPMessageSource(transport: .udp, remoteAddress: remote, localAddress: localAddress, connectionID: nil)
        let limits = configuration.limits
        received(from: source, looksLikeResponse: Self.looksLikeResponse(bytes[...])) { () throws(SIPError) in
            try SIPMessage(datagram: bytes, limits: limits)
        }
    }

    /// Whether the bytes start (after line breaks) as a Status-Line does: responses are
    /// not rate limited, so this is decided before paying for a parse.
    static func looksLikeResponse(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard let start = bytes.firstIndex(where: { $0 != 0x0d && $0 != 0x0a }) else { return false }
        return bytes[start...].starts(with: [0x53, 0x49, 0x50, 0x2f])  // "SIP/"
    }

    // MARK: Receiving, either transport

    /// One message read off the wire: rate limit, parse, validate, stamp, deliver, or
    /// answer or drop what fails.
    private func received(from source: SIPMessageSource, looksLikeResponse: Bool, parse: () throws(SIPError) -> SIPMessage) {
        counters.countReceived(source.transport)
        let verdict: SIPSourceRateLimiter.Verdict =
            looksLikeResponse ? .admit : limiter.admit(from: source.remoteAddress, at: .now)
        if verdict == .drop {
            counters.countDropped(.rateLimited)
            return
        }
        var message: SIPMessage
        do throws(SIPError) {
            message = try parse()
            try message.validate()
        } catch {
            if verdict == .refuse {
                // Over its limit, a source gets no more answers than the 503s allow.
                counters.countDropped(.rateLimited)
            } else {
                reject(error, from: source)
            }
            return
        }
        if message.isRequest {
            do throws(SIPError) {
                try SIPViaStamp.stamp(&message, source: source.remoteAddress,
                                      forceReturnPort: configuration.forceReturnPort && source.transport == .udp)
            } catch {
                counters.countDropped(.malformed)
                return
            }
            if verdict == .refuse {
                refuseOverLimit(message, from: source)
                return
            }
        }
        guard let delegate else {
            counters.countDropped(.noTaker)
            return
        }
        if delegate.transport(self, received: message, from: source) == .noTaker {
            counters.countDropped(.noTaker)
        }
    }

    /// Answers what `SIPError.disposition` says, or drops and counts.
    private func reject(_ error: SIPError, from source: SIPMessageSource) {
        guard case .respond = error.disposition,
              var response = try? error.makeResponse(toTag: SIPStatelessTag.make(for: error.requestHeaders)) else {
            counters.countDropped(error.kind == .messageTooLarge || error.kind == .limitExceeded ? .overLimit : .malformed)
            return
        }
        // The copied Via gets what §18.2.1 would have written into the request's, so the
        // answer is routed as any other. A Via whose parameters do not parse stays as it
        // is, and the answer goes back to the source.
        try? SIPViaStamp.stamp(&response, source: source.remoteAddress,
                               forceReturnPort: configuration.forceReturnPort && source.transport == .udp)
        counters.rejected.add(1, ordering: .relaxed)
        routeResponse(response, to: source)
    }

    /// 503 with Retry-After for a request over its source's limit; an ACK is dropped
    /// (nothing answers an ACK).
    private func refuseOverLimit(_ request: SIPMessage, from source: SIPMessageSource) {
        guard request.method != .ack,
              var response = try? request.makeResponse(statusCode: 503, toTag: SIPStatelessTag.make(for: request.headers)) else {
            counters.countDropped(.rateLimited)
            return
        }
        try? response.headers.add(name: "Retry-After", value: String(configuration.rateLimit.retryAfterSeconds))
        counters.rateLimitRefused.add(1, ordering: .relaxed)
        routeResponse(response, to: source)
    }

    // MARK: TCP connections

    private func acceptConnections(on listener: TCPListener) {
        let secure = listener === tlsListener
        // Bounded per wake-up so a burst of connections cannot starve the rest.
        for _ in 0..<64 {
            let socket: TCPSocket
            do {
                guard let accepted = try listener.accept() else { return }
                socket = accepted
            } catch {
                pauseAccepting()
                return
            }
            let key = socket.remoteAddress.withPort(0)
            // A descriptor from the process's headroom is given back at once (DescriptorHeadroom).
            guard !stopped.load(ordering: .acquiring), !DescriptorHeadroom.encroaches(on: socket.fileDescriptor),
                  connections.count < configuration.maxConnections,
                  connectionsPerSource[key, default: 0] < configuration.maxConnectionsPerSource else {
                counters.connectionsRefused.add(1, ordering: .relaxed)
                socket.close()
                continue
            }
            var session: TLSConnection?
            if secure, let tlsServer {
                do { session = try TLSConnection(context: tlsServer) } catch {
                    counters.tlsHandshakeFailures.add(1, ordering: .relaxed)
                    socket.close()
                    continue
                }
            }
            if open(socket, outbound: false, tls: session) != nil {
                counters.connectionsAccepted.add(1, ordering: .relaxed)
            }
        }
    }

    private func pauseAccepting() {
        guard !acceptPaused else { return }
        acceptPaused = true
        let listeners = [listener] + (tlsListener.map { [$0] } ?? [])
        for listener in listeners { try? loop.setInterest(listener, readable: false, writable: false) }
        loop.schedule(after: Self.acceptBackoff) { [self] in
            acceptPaused = false
            guard !stopped.load(ordering: .acquiring) else { return }
            for listener in listeners { try? loop.setInterest(listener, readable: true, writable: false) }
        }
    }

    private func open(_ socket: TCPSocket, outbound: Bool, tls: TLSConnection?) -> SIPStreamConnection? {
        let id = nextConnectionID
        nextConnectionID += 1
        let tcp = TCPConnection(socket: socket, loop: loop, readBuffer: readBuffer, configuration: configuration.connection)
        let connection = SIPStreamConnection(id: id, tcp: tcp, server: self, isOutbound: outbound, tls: tls)
        // Registered before it starts: a TLS client's first write may already fail it.
        connections[id] = connection
        connectionsPerSource[socket.remoteAddress.withPort(0), default: 0] += 1
        if tls == nil {
            streamsByRemote[socket.remoteAddress] = id
        } else if outbound, let serverName = connection.serverName {
            secureStreams[SecureDestination(address: socket.remoteAddress, serverName: serverName)] = id
        }
        counters.connectionsOpen.add(1, ordering: .relaxed)
        do {
            try connection.start()
        } catch {
            streamClosed(connection, ending: .closed)
            return nil
        }
        return connection
    }

    func streamReceived(_ result: Result<SIPMessage, SIPError>, looksLikeResponse: Bool, on connection: SIPStreamConnection) {
        received(from: connection.source, looksLikeResponse: looksLikeResponse) { () throws(SIPError) in try result.get() }
    }

    func streamClosed(_ connection: SIPStreamConnection, ending: SIPStreamConnection.Ending) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        let remote = connection.tcp.socket.remoteAddress
        let key = remote.withPort(0)
        if let count = connectionsPerSource[key] {
            connectionsPerSource[key] = count > 1 ? count - 1 : nil
        }
        if streamsByRemote[remote] == connection.id { streamsByRemote[remote] = nil }
        if let serverName = connection.serverName {
            let destination = SecureDestination(address: remote, serverName: serverName)
            if secureStreams[destination] == connection.id { secureStreams[destination] = nil }
        }
        counters.connectionsOpen.subtract(1, ordering: .relaxed)
        if ending == .connectFailed {
            // §18.1.1: TCP was chosen for the size alone; the destination gets UDP after all.
            for (bytes, destination) in connection.fallbacks { sendDatagram(bytes, to: destination) }
        }
        // Messages that waited for a TLS handshake that never finished.
        let undelivered = connection.pending.compactMap(\.message)
        if !undelivered.isEmpty {
            for _ in undelivered { counters.countDropped(.sendFailed) }
            reportUndelivered(undelivered, to: remote, reason: connection.handshakeFailure ?? "the connection closed before the TLS handshake finished")
        }
    }
}
