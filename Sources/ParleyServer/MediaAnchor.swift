import ParleyCalling
import ParleyCrypto
import ParleyICE
import ParleyMedia
import ParleyMediaLeg
import ParleyNet
import ParleyRTP
import ParleyStore
import ParleySTUN

/// The server's media anchor: performs the call engine's `MediaInstruction`s and reports
/// `MediaEvent`s back. Each call owns one `MediaTopology` (today a `RelayBridge`: legs in
/// `.forward` mode, ICE-lite, DTLS-SRTP, Opus passed through undecoded) that holds its
/// legs' cores and decides where media goes; the anchor keeps what touches the system:
/// one UDP socket per leg from the configured port pool, the legs' timers, the per
/// application leg quota and the inactivity check.
///
/// Confined to one `EventLoop` (the call loop, shared with the engine): sockets, timers and
/// calls all run on its thread, so nothing here locks. Reports go to `report`, which the
/// engine queues and hands to the registry after the actions it is performing.
final class MediaAnchor: @unchecked Sendable {
    // @unchecked: every member is used on `loop`'s thread only (instructions come from the
    // engine on that loop, socket and timer callbacks run there), so never concurrently.
    typealias LegID = ParleyCalling.MediaLeg

    /// One call's media: its topology and the sockets and timers of its legs.
    private final class CallMedia: @unchecked Sendable {
        // @unchecked: like the anchor, used on the anchor's loop only (its socket and timer
        // callbacks capture it and run there).
        let topology: any MediaTopology<LegID>
        var legs: [LegID: AnchoredLeg] = [:]
        init(topology: any MediaTopology<LegID>) { self.topology = topology }
    }

    private let loop: EventLoop
    private let pool: PortPool
    private let certificate: DTLSCertificate
    private let announcedHost: SocketAddress?
    private let inactivityTimeout: Duration
    private let log: ServerLog
    private let metrics: ServerMetrics
    private let report: (MediaEvent, String) -> Void
    private var calls: [String: CallMedia] = [:]
    private let batch = UDPReceiveBatch(capacity: 16, slotSize: 2048)
    private var inactivityTimer: TimerID?
    private var closed = false
    /// Legs one application may hold at once, so one tenant cannot take every port.
    let maxLegsPerApplication: Int
    private var legsByApplication: [String: Int] = [:]

    init(loop: EventLoop, configuration: ServerConfiguration, certificate: DTLSCertificate, log: ServerLog,
         metrics: ServerMetrics, report: @escaping (MediaEvent, String) -> Void) throws(NetError) {
        self.loop = loop
        pool = try PortPool(host: configuration.mediaBindAddress, range: configuration.mediaPorts)
        self.certificate = certificate
        announcedHost = configuration.mediaAnnouncedAddress
        inactivityTimeout = configuration.mediaInactivityTimeout
        self.log = log
        self.metrics = metrics
        self.report = report
        maxLegsPerApplication = configuration.effectiveMaxMediaLegsPerApplication
    }

    /// Legs open now, over all calls.
    var legCount: Int { calls.values.reduce(0) { $0 + $1.legs.count } }
    /// Ports of the pool in use.
    var portsInUse: Int { pool.allocatedCount }
    /// Legs an application's calls hold now.
    func legCount(applicationKey: String) -> Int { legsByApplication[applicationKey] ?? 0 }

    // MARK: Instructions

    /// `applicationKey` is the call's application, whose leg quota new legs count against.
    func perform(_ instruction: MediaInstruction, applicationKey: String, now: CallTime) {
        switch instruction {
        case .answerCaller(let callID, let offer):
            do throws(MediaLegError) {
                let (call, leg) = try openLeg(callID: callID, leg: .caller, applicationKey: applicationKey, now: now)
                let answer = try call.topology.withLeg(.caller) { (core: inout MediaLegCore) throws(MediaLegError) in
                    try core.answer(offer: offer)
                } ?? ""
                try start(leg, in: call, now: now.instant)
                log.info("media.leg.answered", ["call": callID, "leg": "caller", "port": String(leg.socket.localAddress.port)])
                report(.callerLegReady(sdp: answer), callID)
            } catch {
                closeLeg(callID: callID, leg: .caller, now: now.instant)
                log.warning("media.leg.failed", ["call": callID, "leg": "caller", "reason": error.description])
                report(.legFailed(.caller, reason: error.description), callID)
            }
        case .offerCallee(let callID, let device):
            do throws(MediaLegError) {
                let (call, leg) = try openLeg(callID: callID, leg: .callee(device), applicationKey: applicationKey, now: now)
                let offer = try call.topology.withLeg(.callee(device)) { (core: inout MediaLegCore) throws(MediaLegError) in
                    try core.makeOffer()
                } ?? ""
                log.info("media.leg.offered", ["call": callID, "leg": device.deviceID, "port": String(leg.socket.localAddress.port)])
                report(.calleeLegReady(device, sdp: offer), callID)
            } catch {
                closeLeg(callID: callID, leg: .callee(device), now: now.instant)
                log.warning("media.leg.failed", ["call": callID, "leg": device.deviceID, "reason": error.description])
                report(.legFailed(.callee(device), reason: error.description), callID)
            }
        case .acceptAnswer(let callID, let device, let answer):
            guard let call = calls[callID], let leg = call.legs[.callee(device)] else {
                report(.legFailed(.callee(device), reason: "no media leg for this device"), callID)
                return
            }
            do throws(MediaLegError) {
                _ = try call.topology.withLeg(.callee(device)) { (core: inout MediaLegCore) throws(MediaLegError) in
                    try core.acceptAnswer(answer)
                }
                try start(leg, in: call, now: now.instant)
            } catch {
                log.warning("media.leg.failed", ["call": callID, "leg": device.deviceID, "reason": error.description])
                report(.legFailed(.callee(device), reason: error.description), callID)
            }
        case .bridge(let callID, let device):
            guard let call = calls[callID] else { return }
            do throws(MediaTopologyError) {
                try call.topology.join(.caller)
                try call.topology.join(.callee(device))
                log.info("media.bridge", ["call": callID, "callee": device.deviceID])
            } catch {
                // A leg that failed is gone already and was reported; the call ends on that report.
                log.warning("media.bridge.refused", ["call": callID, "callee": device.deviceID, "reason": error.description])
            }
            // A leg connected before the bridge existed was reported then; nothing to redo.
        case .sendDTMF(let callID, let leg, let digits):
            // MediaLegCore has no RFC 4733 sender yet: the request is accepted by the engine
            // but no tones are generated.
            log.warning("media.dtmf.unsupported", ["call": callID, "leg": leg.description, "digits": digits])
        case .closeLeg(let callID, let leg):
            closeLeg(callID: callID, leg: leg, now: now.instant)
        case .closeAll(let callID):
            _ = closeAll(callID: callID, now: now.instant)
        }
    }

    /// Closes every leg of a call and returns their final statistics (for the record).
    func closeAll(callID: String, now: ContinuousClock.Instant) -> [LegID: MediaLegStatistics] {
        guard let call = calls.removeValue(forKey: callID) else { return [:] }
        var statistics: [LegID: MediaLegStatistics] = [:]
        for id in Array(call.legs.keys) {
            if let final = shut(id, of: call, now: now) { statistics[id] = final }
        }
        return statistics
    }

    /// The statistics of a call's open legs now.
    func statistics(callID: String) -> [LegID: MediaLegStatistics] {
        guard let call = calls[callID] else { return [:] }
        var result: [LegID: MediaLegStatistics] = [:]
        for id in call.legs.keys {
            result[id] = call.topology.withLeg(id) { (core: inout MediaLegCore) in core.statistics }
        }
        return result
    }

    /// Closes every leg of every call (shutdown).
    func closeEverything() {
        let now = ContinuousClock.now
        for callID in Array(calls.keys) { _ = closeAll(callID: callID, now: now) }
        if let inactivityTimer { loop.cancel(inactivityTimer) }
        inactivityTimer = nil
        closed = true
    }

    // MARK: Legs

    private func openLeg(callID: String, leg id: LegID, applicationKey: String,
                         now: CallTime) throws(MediaLegError) -> (CallMedia, AnchoredLeg) {
        guard !closed else { throw MediaLegError(.state, "the media anchor is shut down") }
        let call = calls[callID] ?? CallMedia(topology: RelayBridge<LegID>())
        if call.legs[id] != nil { _ = shut(id, of: call, now: now.instant) }
        let held = legsByApplication[applicationKey] ?? 0
        guard held < maxLegsPerApplication else {
            throw MediaLegError(.socket, "the application holds \(held) media legs, its limit (maxMediaLegsPerApplication)")
        }
        let socket: UDPSocket
        do { socket = try pool.openSocket() } catch {
            throw MediaLegError(.socket, "no media port: \(error)")
        }
        let host = announcedHost ?? socket.localAddress
        let local = ICETransportAddress(ip: STUNIPAddress(bytes: host.hostBytes) ?? .ipv4(0), port: socket.localAddress.port)
        var configuration = MediaLegConfiguration(iceMode: .lite, certificate: certificate)
        configuration.codecs = [.opus]
        configuration.mediaMode = call.topology.mediaMode(for: id)
        configuration.consentTimeout = inactivityTimeout
        configuration.consentDisconnectedAfter = min(.seconds(10), inactivityTimeout)
        let core = MediaLegCore(configuration: configuration, localAddresses: [local], now: now.instant,
                                wallClockNanoseconds: ServerClock.unixNanoseconds())
        let leg = AnchoredLeg(callID: callID, leg: id, socket: socket, localICE: local, now: now.instant)
        do {
            try loop.register(socket, closeOnShutdown: true, onReadable: { [weak self, weak leg, weak call] in
                guard let self, let leg, let call else { return }
                self.readable(leg, in: call)
            })
            leg.registered = true
        } catch {
            socket.close()
            throw MediaLegError(.socket, "cannot watch \(socket.localAddress): \(error)")
        }
        call.topology.add(id, core: core)
        call.legs[id] = leg
        calls[callID] = call
        leg.countedApplication = applicationKey
        legsByApplication[applicationKey, default: 0] += 1
        scheduleInactivityCheck()
        return (call, leg)
    }

    private func start(_ leg: AnchoredLeg, in call: CallMedia, now: ContinuousClock.Instant) throws(MediaLegError) {
        guard !leg.started else { return }
        leg.started = true
        leg.lastReceived = now
        perform(try call.topology.start(leg.leg, now: now), in: call)
        reschedule(leg, in: call)
    }

    private func closeLeg(callID: String, leg id: LegID, now: ContinuousClock.Instant) {
        guard let call = calls[callID], call.legs[id] != nil else { return }
        _ = shut(id, of: call, now: now)
        if call.legs.isEmpty { calls[callID] = nil }
    }

    /// Sends the leg's goodbye, stops its timer, closes its socket (returning the port) and
    /// takes it out of the call's topology; returns its final statistics.
    private func shut(_ id: LegID, of call: CallMedia, now: ContinuousClock.Instant) -> MediaLegStatistics? {
        guard let leg = call.legs[id] else { return nil }
        leg.reportedEnd = true
        if let application = leg.countedApplication {
            leg.countedApplication = nil
            let left = (legsByApplication[application] ?? 1) - 1
            legsByApplication[application] = left > 0 ? left : nil
        }
        let removed = call.topology.remove(id, now: now)
        if let removed { perform(removed.actions, in: call) }
        call.legs[id] = nil
        if let timer = leg.timer { loop.cancel(timer.id) }
        leg.timer = nil
        if leg.registered { loop.deregister(leg.socket); leg.registered = false }
        leg.socket.close()
        guard let statistics = removed?.statistics else { return nil }
        metrics.update { $0.mediaPacketsLost += Int(max(0, statistics.rtp.inboundCumulativeLost)) }
        log.info("media.leg.closed", [
            "call": leg.callID, "leg": leg.leg.description, "received": String(statistics.rtp.packetsReceived),
            "sent": String(statistics.rtp.packetsSent), "lost": String(statistics.rtp.inboundCumulativeLost),
            "jitterMs": String(statistics.rtp.inboundJitterMilliseconds),
        ])
        return statistics
    }

    private func readable(_ leg: AnchoredLeg, in call: CallMedia) {
        for _ in 0..<8 {  // bounded per wake-up so the other legs on the loop get their turn
            let count: Int
            do { count = try leg.socket.receive(into: batch) } catch {
                log.warning("media.receive.failed", ["call": leg.callID, "leg": leg.leg.description, "error": "\(error)"])
                return
            }
            if count == 0 { break }
            let now = ContinuousClock.now
            leg.lastReceived = now
            for index in 0..<count {
                let bytes = [UInt8](batch.payload(at: index))
                let source = batch.source(at: index)
                let from = ICETransportAddress(ip: STUNIPAddress(bytes: source.hostBytes) ?? .ipv4(0), port: source.port)
                perform(call.topology.receive(bytes, from: from, on: leg.leg, local: leg.localICE, now: now), in: call)
            }
            if count < batch.capacity { break }
        }
        rescheduleAll(in: call)
    }

    private func perform(_ actions: [MediaTopologyAction<LegID>], in call: CallMedia) {
        var forwarded = 0
        var receivedMedia = 0
        var dropped = 0
        for action in actions {
            switch action {
            case .send(let id, let bytes, _, let to):
                guard let leg = call.legs[id], let destination = SocketAddress(hostBytes: to.ip.bytes, port: to.port) else { continue }
                _ = try? leg.socket.send(bytes, to: destination)
            case .stateChanged(let id, let state):
                if let leg = call.legs[id] { stateChanged(leg, in: call, to: state) }
            case .receivedMedia:
                receivedMedia += 1
            case .forwarded:
                forwarded += 1
            case .receivedTelephoneEvent(let id, let event, let timestamp):
                // Not yet an input of the call engine (DTMF is the SIP issue's): logged.
                log.info("media.dtmf.received", [
                    "call": call.legs[id]?.callID ?? "-", "leg": id.description,
                    "event": TelephoneEvent.key(for: event.event).map(String.init) ?? String(event.event),
                    "end": event.isEnd ? "true" : "false", "timestamp": String(timestamp),
                ])
            case .dropped:
                dropped += 1
            }
        }
        if forwarded + receivedMedia + dropped > 0 {
            metrics.update {
                $0.mediaPacketsForwarded += forwarded
                $0.mediaPacketsReceived += receivedMedia
                $0.mediaPacketsDropped += dropped
            }
        }
    }

    private func stateChanged(_ leg: AnchoredLeg, in call: CallMedia, to state: MediaLegState) {
        let failure = { call.topology.withLeg(leg.leg) { (core: inout MediaLegCore) in core.failure?.description } ?? nil }
        switch state {
        case .connected:
            log.info("media.leg.connected", ["call": leg.callID, "leg": leg.leg.description])
            if !leg.reportedConnected && !leg.reportedEnd {
                leg.reportedConnected = true
                report(.legConnected(leg.leg), leg.callID)
            }
        case .failed:
            let reason = failure() ?? "media leg failed"
            log.warning("media.leg.failed", ["call": leg.callID, "leg": leg.leg.description, "reason": reason])
            if !leg.reportedEnd {
                leg.reportedEnd = true
                report(.legFailed(leg.leg, reason: reason), leg.callID)
            }
        case .closed:
            // Closed by the peer (DTLS close_notify): a leg we close ourselves is marked
            // `reportedEnd` before it closes.
            if !leg.reportedEnd {
                leg.reportedEnd = true
                let reason = failure() ?? "the device closed the media leg"
                log.info("media.leg.closed.by.peer", ["call": leg.callID, "leg": leg.leg.description, "reason": reason])
                report(.legFailed(leg.leg, reason: reason), leg.callID)
            }
        default:
            break
        }
    }

    /// A packet on one leg can make another send (the bridge), so every leg's deadline may
    /// have moved.
    private func rescheduleAll(in call: CallMedia) {
        for leg in call.legs.values { reschedule(leg, in: call) }
    }

    private func reschedule(_ leg: AnchoredLeg, in call: CallMedia) {
        guard let next = call.topology.nextDeadline(of: leg.leg), leg.registered else {
            if let timer = leg.timer { loop.cancel(timer.id); leg.timer = nil }
            return
        }
        if let timer = leg.timer {
            if timer.at == next { return }
            loop.cancel(timer.id)
        }
        let id = loop.schedule(at: next) { [weak self, weak leg, weak call] in
            guard let self, let leg, let call else { return }
            leg.timer = nil
            let now = ContinuousClock.now
            self.perform(call.topology.handleTimeout(of: leg.leg, now: now), in: call)
            self.rescheduleAll(in: call)
        }
        leg.timer = (id, next)
    }

    /// Once a second while legs exist: a connected leg that heard nothing from its device
    /// for `inactivityTimeout` is reported inactive (consent expiry reports it failed).
    private func scheduleInactivityCheck() {
        guard inactivityTimer == nil, !closed else { return }
        let interval = min(Duration.seconds(1), inactivityTimeout / 4)
        inactivityTimer = loop.schedule(after: interval) { [weak self] in
            guard let self else { return }
            self.inactivityTimer = nil
            let now = ContinuousClock.now
            for call in self.calls.values {
                for leg in call.legs.values where leg.started && !leg.reportedEnd
                    && call.topology.withLeg(leg.leg, { (core: inout MediaLegCore) in core.state }) == .connected
                    && now - leg.lastReceived >= self.inactivityTimeout {
                    leg.reportedEnd = true
                    self.log.warning("media.leg.inactive", ["call": leg.callID, "leg": leg.leg.description])
                    self.report(.legInactive(leg.leg), leg.callID)
                }
            }
            if !self.calls.isEmpty { self.scheduleInactivityCheck() }
        }
    }
}

extension CallLegStatistics {
    /// The stored figures of a leg from the media layer's counters.
    init(_ statistics: MediaLegStatistics) {
        let rtp = statistics.rtp
        self.init(
            packetsSent: Int64(clamping: rtp.packetsSent), octetsSent: Int64(clamping: rtp.octetsSent),
            packetsReceived: Int64(clamping: rtp.packetsReceived), octetsReceived: Int64(clamping: rtp.octetsReceived),
            inboundFractionLost: rtp.inboundFractionLost, inboundCumulativeLost: rtp.inboundCumulativeLost,
            inboundJitterMilliseconds: rtp.inboundJitterMilliseconds, outboundFractionLost: rtp.outboundFractionLost,
            outboundCumulativeLost: rtp.outboundCumulativeLost, outboundJitterMilliseconds: rtp.outboundJitterMilliseconds,
            roundTripTimeMilliseconds: rtp.roundTripTimeMilliseconds)
    }
}
