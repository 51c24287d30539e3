import ParleyICECore
public import ParleyMediaCore
public import ParleyMediaLegCore
public import ParleyNetCore
public import ParleyNetLinux
public import ParleyRTP
import ParleySTUN
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A media leg on real sockets: `MediaLegCore` driven by an `EventLoop`, with its own UDP
/// socket per local address and a real-time pacer that sends a frame from the source and
/// plays a frame into the sink every 20 ms.
///
/// The transport is the configuration's (`MediaLegConfiguration.transport`): ICE + DTLS-SRTP
/// for a WebRTC peer (`init(iceMode:certificate:)`), or plain RTP with symmetric latching for
/// a SIP peer (`init(plainRTP:)`, announcing the first bound address in `c=`/`m=`). The shell
/// is the same for both: datagrams in, the core's sends out, its deadlines on the loop.
///
/// The actor runs on the loop's thread (the loop is its executor), so socket readiness,
/// timers and calls from outside are serialised without locks.
///
/// ```swift
/// let leg = try MediaLeg(configuration: config, bindingTo: [.ipv4Loopback(port: 0)], on: loop)
/// let offer = try await leg.makeOffer()
/// // ... signal the offer, get the answer ...
/// try await leg.acceptAnswer(answer)
/// try await leg.start(source: ToneSource(frequency: 440), sink: WAVFileSink(sampleRate: 48_000))
/// _ = await leg.waitUntil { $0 == .connected }
/// ```
public actor MediaLeg {
    public nonisolated let loop: EventLoop
    /// The local addresses the leg's sockets are bound to (its ICE host candidates).
    public nonisolated let localAddresses: [SocketAddress]
    public nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    private var core: MediaLegCore
    private let sockets: [UDPSocket]
    private let batch = UDPReceiveBatch(capacity: 16, slotSize: 2048)
    private var source: (any AudioSource & Sendable)?
    private var sink: (any AudioSink & Sendable)?
    private var pacer: AudioPacer?
    private var pacerTimer: TimerID?
    private var deadlineTimer: (id: TimerID, at: ContinuousClock.Instant)?
    private var waiters: [UInt64: (predicate: @Sendable (MediaLegState) -> Bool, continuation: CheckedContinuation<MediaLegState, Never>)] = [:]
    private var nextWaiterID: UInt64 = 0
    private let log: @Sendable (String) -> Void
    private var loggedDrops: [MediaLegDropReason: UInt64] = [:]
    private var sendErrors: UInt64 = 0
    private var registered = false
    private var telephoneEventObserver: (@Sendable (TelephoneEvent, _ timestamp: UInt32) -> Void)?

    /// Opens one UDP socket per address (port 0 picks a free port).
    /// - Parameters:
    ///   - random: the core's generator (ICE credentials, SSRC, transaction IDs...); the
    ///     system's secure one unless a test seeds it.
    ///   - log: receives one line per state change, failure and dropped datagram (the
    ///     first few of each reason, then every 1000th).
    public init(
        configuration: MediaLegConfiguration, bindingTo addresses: [SocketAddress], on loop: EventLoop,
        random: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(MediaLegError) {
        var sockets: [UDPSocket] = []
        for address in addresses {
            do { sockets.append(try UDPSocket(bindingTo: address)) } catch {
                sockets.forEach { $0.close() }
                throw MediaLegError(.socket, "cannot bind \(address): \(error)")
            }
        }
        self.loop = loop
        self.sockets = sockets
        localAddresses = sockets.map(\.localAddress)
        self.log = log
        core = MediaLegCore(
            configuration: configuration, localAddresses: localAddresses.map(Self.iceAddress), now: SystemClock.now(), random: random)
    }

    // MARK: Negotiation

    public func makeOffer() throws(MediaLegError) -> String { try core.makeOffer() }
    public func acceptAnswer(_ sdp: String) throws(MediaLegError) { try core.acceptAnswer(sdp) }
    public func answer(offer sdp: String) throws(MediaLegError) -> String { try core.answer(offer: sdp) }

    // MARK: Running

    /// Starts ICE/DTLS and the 20 ms pacer: each tick sends the source's next frame (once
    /// connected; none when `source` is nil or exhausted) and gives the sink 20 ms of
    /// received audio (48 kHz mono).
    public func start(source: (any AudioSource & Sendable)? = nil, sink: (any AudioSink & Sendable)? = nil) throws(MediaLegError) {
        self.source = source
        self.sink = sink
        for socket in sockets {
            do {
                try loop.register(socket, closeOnShutdown: true, onReadable: { [weak self] in
                    self?.assumeIsolated { $0.readable(socket) }
                })
            } catch {
                throw MediaLegError(.socket, "cannot watch \(socket.localAddress): \(error)")
            }
        }
        registered = true
        let now = ContinuousClock.now
        perform(try core.start(now: now))
        var pacer = AudioPacer(start: now)
        _ = pacer.dueTicks(now: now)
        self.pacer = pacer
        schedulePacer()
        rescheduleDeadline()
    }

    /// Gives a started leg its audio: from the next tick the pacer sends `source`'s frames
    /// and plays received audio into `sink`. A callee leg that connects while it rings is
    /// started without audio and gets it here when the user answers, so nothing of the
    /// microphone leaves the device before the answer and the first word after it does.
    public func attach(source: (any AudioSource & Sendable)?, sink: (any AudioSink & Sendable)?) {
        self.source = source
        self.sink = sink
    }

    /// Ends the leg (RTCP BYE, DTLS close_notify), stops the pacer and closes the sockets.
    public func close() {
        perform(core.close(now: .now))
        stopIO()
    }

    // MARK: DTMF

    /// Sends `tones` as RFC 4733 telephone events, one after another, and returns once the
    /// last has ended. Each tone is a run of packets every 20 ms for `duration`, all with
    /// the RTP timestamp at which it began, the first with the marker, the duration field
    /// growing; then its end packet (E bit) three times, as §2.5.1.4 recommends so a lost
    /// one does not leave the tone sounding. `gap` separates two tones.
    ///
    /// The audio pacer keeps running meanwhile: the events carry their own payload type,
    /// and a receiver that understands them plays the tone instead of the audio.
    /// - Returns: false, sending nothing, when the leg is not connected, the peer did not
    ///   negotiate `telephone-event`, or a tone is not one of `0-9 * # A-D`; false too
    ///   when the leg stops being connected part-way (the rest is not sent).
    public func sendDTMF(_ tones: String, duration: Duration = .milliseconds(100), gap: Duration = .milliseconds(70)) async -> Bool {
        let codes = tones.map { $0.isLowercase ? nil : TelephoneEvent.eventCode(for: $0) }  // A-D only, as documented
        guard !codes.isEmpty, codes.allSatisfy({ $0 != nil }), core.state == .connected,
              let clockRate = core.telephoneEventClockRate else { return false }
        let packetInterval = Duration.milliseconds(20)
        let unitsPerPacket = Int(clockRate) / 50
        // At least one packet per tone; the duration field is 16 bits (§2.5.2.3 says a
        // longer event is split, which DTMF's tenths of a second never need).
        let packets = max(1, Int((duration / packetInterval).rounded(.up)))
        for (index, code) in codes.enumerated() {
            guard let code else { return false }
            if index > 0 { try? await Task.sleep(for: gap) }
            // Sampled once: the timestamp the audio would carry now, which every packet
            // of this tone repeats (§2.5.1.2).
            let began = core.nextRTPTimestamp
            let start = ContinuousClock.now
            for step in 0..<packets {
                guard core.state == .connected else { return false }
                let units = UInt16(clamping: (step + 1) * unitsPerPacket)
                perform(core.sendTelephoneEvent(TelephoneEvent(event: code, duration: units), eventTimestamp: began,
                                                marker: step == 0, now: .now))
                // Paced from the tone's start, so a late wake-up does not stretch the tone.
                try? await Task.sleep(until: start + packetInterval * (step + 1), clock: .continuous)
            }
            guard core.state == .connected else { return false }
            let end = TelephoneEvent(event: code, isEnd: true, duration: UInt16(clamping: packets * unitsPerPacket))
            for _ in 0..<3 {
                perform(core.sendTelephoneEvent(end, eventTimestamp: began, marker: false, now: .now))
            }
        }
        return true
    }

    /// Calls `observer` on the leg's loop with each telephone event the peer sends, as the
    /// core reports them: once when an event begins and once when it ends. Replaces an
    /// earlier observer.
    public func observeTelephoneEvents(_ observer: @escaping @Sendable (_ event: TelephoneEvent, _ timestamp: UInt32) -> Void) {
        telephoneEventObserver = observer
    }

    /// The leg's state now.
    public var state: MediaLegState { core.state }
    /// Why it failed, if it did.
    public var failure: MediaLegError? { core.failure }
    /// Everything counted so far.
    public var statistics: MediaLegStatistics { core.statistics }

    /// Takes the sink back (e.g. a `WAVFileSink` to read its recording); the pacer stops
    /// feeding it.
    public func takeSink() -> (any AudioSink & Sendable)? {
        defer { sink = nil }
        return sink
    }

    /// Waits until the state satisfies `predicate` (returns at once if it already does),
    /// or `timeout` passes; returns the state then.
    public func waitUntil(timeout: Duration = .seconds(30), _ predicate: @escaping @Sendable (MediaLegState) -> Bool) async -> MediaLegState {
        if predicate(core.state) { return core.state }
        let deadline = ContinuousClock.now + timeout
        let id = nextWaiterID
        nextWaiterID += 1
        return await withCheckedContinuation { continuation in
            waiters[id] = (predicate, continuation)
            loop.schedule(at: deadline) { [weak self] in
                guard let self else { return }
                self.assumeIsolated { $0.timeOutWaiter(id) }
            }
        }
    }

    // MARK: Loop callbacks

    private func readable(_ socket: UDPSocket) {
        let local = Self.iceAddress(socket.localAddress)
        for _ in 0..<8 {  // bounded per wake-up so other sockets on the loop get their turn
            let count: Int
            do { count = try socket.receive(into: batch) } catch {
                log("media leg: receive on \(socket.localAddress) failed: \(error)")
                return
            }
            if count == 0 { break }
            let now = ContinuousClock.now
            for index in 0..<count {
                let bytes = [UInt8](batch.payload(at: index))
                let source = Self.iceAddress(batch.source(at: index))
                perform(core.receive(bytes, from: source, on: local, now: now))
            }
            if count < batch.capacity { break }
        }
        rescheduleDeadline()
    }

    private func pacerTick() {
        pacerTimer = nil
        guard var pacer, core.state == .checking || core.state == .connected || core.state == .new else { return }
        let now = ContinuousClock.now
        let due = pacer.dueTicks(now: now)
        self.pacer = pacer
        for _ in 0..<due {
            if var source {
                if let frame = source.nextFrame() {
                    do { perform(try core.sendAudio(frame, now: now)) } catch { log("media leg: send audio: \(error)") }
                } else {
                    self.source = nil
                }
                if self.source != nil { self.source = source }
            }
            let samples = core.playout(now: now)
            if var sink {
                try? sink.consume(AudioFrame(samples: samples, sampleRate: 48_000))
                self.sink = sink
            }
        }
        schedulePacer()
        rescheduleDeadline()
    }

    private func schedulePacer() {
        guard let pacer, pacerTimer == nil else { return }
        pacerTimer = loop.schedule(at: pacer.nextTick) { [weak self] in
            guard let self else { return }
            self.assumeIsolated { $0.pacerTick() }
        }
    }

    private func deadlineFired() {
        deadlineTimer = nil
        perform(core.handleTimeout(now: .now))
        rescheduleDeadline()
    }

    private func rescheduleDeadline() {
        guard let next = core.nextDeadline else {
            if let current = deadlineTimer { loop.cancel(current.id); deadlineTimer = nil }
            return
        }
        if let current = deadlineTimer {
            if current.at == next { return }
            loop.cancel(current.id)
        }
        let id = loop.schedule(at: next) { [weak self] in
            guard let self else { return }
            self.assumeIsolated { $0.deadlineFired() }
        }
        deadlineTimer = (id, next)
    }

    private func perform(_ actions: [MediaLegAction]) {
        for action in actions {
            switch action {
            case .send(let bytes, let from, let to):
                guard let destination = SocketAddress(hostBytes: to.ip.bytes, port: to.port) else { continue }
                let socket = sockets.first { Self.iceAddress($0.localAddress) == from } ?? sockets.first
                do { _ = try socket?.send(bytes, to: destination) } catch {
                    sendErrors &+= 1
                    if sendErrors <= 3 { log("media leg: send to \(destination) failed: \(error)") }
                }
            case .stateChanged(let state):
                if state == .failed || state == .closed, let failure = core.failure {
                    log("media leg: \(state): \(failure)")
                } else {
                    log("media leg: \(state)")
                }
                if state == .failed { stopIO() }
                resumeWaiters()
            case .receivedRTP:
                break  // forward mode needs a second leg to forward to; a lone leg plays what it receives
            case .receivedTelephoneEvent(let event, let timestamp):
                log("media leg: telephone event \(TelephoneEvent.key(for: event.event).map(String.init) ?? String(event.event))"
                    + " at \(timestamp)\(event.isEnd ? " ended" : "")")
                telephoneEventObserver?(event, timestamp)
            case .dropped(let reason, let from, let detail):
                let count = loggedDrops[reason, default: 0] &+ 1
                loggedDrops[reason] = count
                if count <= 5 || count % 1000 == 0 {
                    log("media leg: dropped datagram from \(from): \(reason) (\(detail)), \(count) so far")
                }
            }
        }
    }

    private func resumeWaiters() {
        let state = core.state
        for (id, waiter) in waiters where waiter.predicate(state) {
            waiters[id] = nil
            waiter.continuation.resume(returning: state)
        }
    }

    private func timeOutWaiter(_ id: UInt64) {
        waiters.removeValue(forKey: id)?.continuation.resume(returning: core.state)
    }

    private func stopIO() {
        if let pacerTimer { loop.cancel(pacerTimer) }
        pacerTimer = nil
        pacer = nil
        if let deadlineTimer { loop.cancel(deadlineTimer.id) }
        deadlineTimer = nil
        if registered {
            for socket in sockets { loop.deregister(socket) }
            registered = false
        }
        for socket in sockets { socket.close() }
        resumeWaiters()
    }

    // MARK: Helpers

    static func iceAddress(_ address: SocketAddress) -> ICETransportAddress {
        ICETransportAddress(ip: STUNIPAddress(bytes: address.hostBytes) ?? .ipv4(0), port: address.port)
    }
}
