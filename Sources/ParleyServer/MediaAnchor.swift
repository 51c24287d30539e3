import ParleyCallModel
import ParleyCalling
import ParleyCrypto
import ParleyICE
import ParleyMedia
import ParleyMediaLeg
import ParleyNetCore
import ParleyNetLinux
import ParleyStore
import ParleySTUN

/// The server's media anchor: performs the call engine's `MediaInstruction`s with
/// relay-mode `MediaLegCore`s (ICE-lite, DTLS-SRTP, Opus passed through undecoded), one
/// UDP socket per leg from the configured port pool, and reports `MediaEvent`s back.
///
/// Confined to one `EventLoop` (the call loop, shared with the engine): sockets, timers and
/// calls all run on its thread, so nothing here locks. Reports go to `report`, which the
/// engine queues and hands to the registry after the actions it is performing.
final class MediaAnchor: @unchecked Sendable {
    // @unchecked: every member is used on `loop`'s thread only (instructions come from the
    // engine on that loop, socket and timer callbacks run there), so never concurrently.
    private let loop: EventLoop
    private let pool: PortPool
    private let certificate: DTLSCertificate
    private let announcedHost: SocketAddress?
    private let inactivityTimeout: Duration
    private let log: ServerLog
    private let metrics: ServerMetrics
    private let report: (MediaEvent, String) -> Void
    private var legs: [String: [CallLegID: AnchoredLeg]] = [:]
    /// The callee device whose leg each call's caller leg is forwarding to.
    private var bridges: [String: Party] = [:]
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
    var legCount: Int { legs.values.reduce(0) { $0 + $1.count } }
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
                let leg = try openLeg(callID: callID, leg: .caller, applicationKey: applicationKey, now: now)
                let answer = try leg.core.answer(offer: offer)
                try start(leg, now: now.instant)
                log.info("media.leg.answered", ["call": callID, "leg": "caller", "port": String(leg.socket.localAddress.port)])
                report(.callerLegReady(sdp: answer), callID)
            } catch {
                closeLeg(callID: callID, leg: .caller, now: now.instant)
                log.warning("media.leg.failed", ["call": callID, "leg": "caller", "reason": error.description])
                report(.legFailed(.caller, reason: error.description), callID)
            }
        case .offerCallee(let callID, let party):
            do throws(MediaLegError) {
                let leg = try openLeg(callID: callID, leg: .callee(party), applicationKey: applicationKey, now: now)
                let offer = try leg.core.makeOffer()
                log.info("media.leg.offered", ["call": callID, "leg": party.logName, "port": String(leg.socket.localAddress.port)])
                report(.calleeLegReady(party, sdp: offer), callID)
            } catch {
                closeLeg(callID: callID, leg: .callee(party), now: now.instant)
                log.warning("media.leg.failed", ["call": callID, "leg": party.logName, "reason": error.description])
                report(.legFailed(.callee(party), reason: error.description), callID)
            }
        case .acceptAnswer(let callID, let party, let answer):
            guard let leg = legs[callID]?[.callee(party)] else {
                report(.legFailed(.callee(party), reason: "no media leg for this device"), callID)
                return
            }
            do throws(MediaLegError) {
                try leg.core.acceptAnswer(answer)
                try start(leg, now: now.instant)
            } catch {
                log.warning("media.leg.failed", ["call": callID, "leg": party.logName, "reason": error.description])
                report(.legFailed(.callee(party), reason: error.description), callID)
            }
        case .bridge(let callID, let party):
            bridges[callID] = party
            log.info("media.bridge", ["call": callID, "callee": party.logName])
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
    func closeAll(callID: String, now: ContinuousClock.Instant) -> [CallLegID: MediaLegStatistics] {
        bridges[callID] = nil
        guard let callLegs = legs.removeValue(forKey: callID) else { return [:] }
        var statistics: [CallLegID: MediaLegStatistics] = [:]
        for (id, leg) in callLegs {
            statistics[id] = shut(leg, now: now)
        }
        return statistics
    }

    /// The statistics of a call's open legs now.
    func statistics(callID: String) -> [CallLegID: MediaLegStatistics] {
        (legs[callID] ?? [:]).mapValues { $0.core.statistics }
    }

    /// Closes every leg of every call (shutdown).
    func closeEverything() {
        let now = ContinuousClock.now
        for callID in Array(legs.keys) { _ = closeAll(callID: callID, now: now) }
        if let inactivityTimer { loop.cancel(inactivityTimer) }
        inactivityTimer = nil
        closed = true
    }

    // MARK: Legs

    private func openLeg(callID: String, leg id: CallLegID, applicationKey: String,
                         now: CallTime) throws(MediaLegError) -> AnchoredLeg {
        guard !closed else { throw MediaLegError(.state, "the media anchor is shut down") }
        if let existing = legs[callID]?[id] { _ = shut(existing, now: now.instant) }
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
        configuration.relay = true
        configuration.consentTimeout = inactivityTimeout
        configuration.consentDisconnectedAfter = min(.seconds(10), inactivityTimeout)
        let core = MediaLegCore(configuration: configuration, localAddresses: [local], now: now.instant,
                                wallClockNanoseconds: ServerClock.unixNanoseconds())
        let leg = AnchoredLeg(callID: callID, leg: id, core: core, socket: socket, localICE: local, now: now.instant)
        do {
            try loop.register(socket, closeOnShutdown: true, onReadable: { [weak self, weak leg] in
                guard let self, let leg else { return }
                self.readable(leg)
            })
            leg.registered = true
        } catch {
            socket.close()
            throw MediaLegError(.socket, "cannot watch \(socket.localAddress): \(error)")
        }
        legs[callID, default: [:]][id] = leg
        leg.countedApplication = applicationKey
        legsByApplication[applicationKey, default: 0] += 1
        scheduleInactivityCheck()
        return leg
    }

    private func start(_ leg: AnchoredLeg, now: ContinuousClock.Instant) throws(MediaLegError) {
        guard !leg.started else { return }
        leg.started = true
        leg.lastReceived = now
        perform(try leg.core.start(now: now), on: leg, now: now)
        reschedule(leg)
    }

    private func closeLeg(callID: String, leg id: CallLegID, now: ContinuousClock.Instant) {
        guard let leg = legs[callID]?.removeValue(forKey: id) else { return }
        if legs[callID]?.isEmpty == true { legs[callID] = nil }
        if case .callee(let party) = id, bridges[callID] == party { bridges[callID] = nil }
        _ = shut(leg, now: now)
    }

    /// Sends the leg's goodbye, stops its timer and closes its socket (returning the port).
    private func shut(_ leg: AnchoredLeg, now: ContinuousClock.Instant) -> MediaLegStatistics {
        leg.reportedEnd = true
        if let application = leg.countedApplication {
            leg.countedApplication = nil
            let left = (legsByApplication[application] ?? 1) - 1
            legsByApplication[application] = left > 0 ? left : nil
        }
        perform(leg.core.close(now: now), on: leg, now: now)
        if let timer = leg.timer { loop.cancel(timer.id) }
        leg.timer = nil
        if leg.registered { loop.deregister(leg.socket); leg.registered = false }
        leg.socket.close()
        let statistics = leg.core.statistics
        metrics.update { $0.mediaPacketsLost += Int(max(0, statistics.rtp.inboundCumulativeLost)) }
        log.info("media.leg.closed", [
            "call": leg.callID, "leg": leg.leg.description, "received": String(statistics.rtp.packetsReceived),
            "sent": String(statistics.rtp.packetsSent), "lost": String(statistics.rtp.inboundCumulativeLost),
            "jitterMs": String(statistics.rtp.inboundJitterMilliseconds),
        ])
        return statistics
    }

    private func readable(_ leg: AnchoredLeg) {
        var received = 0
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
                received += 1
                perform(leg.core.receive(bytes, from: from, on: leg.localICE, now: now), on: leg, now: now)
            }
            if count < batch.capacity { break }
        }
        reschedule(leg)
    }

    private func perform(_ actions: [MediaLegAction], on leg: AnchoredLeg, now: ContinuousClock.Instant) {
        var forwarded = 0
        var receivedRTP = 0
        var dropped = 0
        for action in actions {
            switch action {
            case .send(let bytes, _, let to):
                guard let destination = SocketAddress(hostBytes: to.ip.bytes, port: to.port) else { continue }
                _ = try? leg.socket.send(bytes, to: destination)
            case .stateChanged(let state):
                stateChanged(leg, to: state)
            case .receivedRTP(let packet):
                receivedRTP += 1
                if let peer = bridgedPeer(of: leg) {
                    let out = peer.core.relay(packet, now: now)
                    if !out.isEmpty { forwarded += 1 }
                    perform(out, on: peer, now: now)
                }
            case .dropped:
                dropped += 1
            }
        }
        if forwarded + receivedRTP + dropped > 0 {
            metrics.update {
                $0.mediaPacketsForwarded += forwarded
                $0.mediaPacketsReceived += receivedRTP
                $0.mediaPacketsDropped += dropped
            }
        }
    }

    private func bridgedPeer(of leg: AnchoredLeg) -> AnchoredLeg? {
        guard let party = bridges[leg.callID], let callLegs = legs[leg.callID] else { return nil }
        switch leg.leg {
        case .caller: return callLegs[.callee(party)]
        case .callee(let other): return other == party ? callLegs[.caller] : nil
        }
    }

    private func stateChanged(_ leg: AnchoredLeg, to state: MediaLegState) {
        switch state {
        case .connected:
            log.info("media.leg.connected", ["call": leg.callID, "leg": leg.leg.description])
            if !leg.reportedConnected && !leg.reportedEnd {
                leg.reportedConnected = true
                report(.legConnected(leg.leg), leg.callID)
            }
        case .failed:
            let reason = leg.core.failure?.description ?? "media leg failed"
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
                let reason = leg.core.failure?.description ?? "the device closed the media leg"
                log.info("media.leg.closed.by.peer", ["call": leg.callID, "leg": leg.leg.description, "reason": reason])
                report(.legFailed(leg.leg, reason: reason), leg.callID)
            }
        default:
            break
        }
    }

    private func reschedule(_ leg: AnchoredLeg) {
        guard let next = leg.core.nextDeadline, leg.registered else {
            if let timer = leg.timer { loop.cancel(timer.id); leg.timer = nil }
            return
        }
        if let timer = leg.timer {
            if timer.at == next { return }
            loop.cancel(timer.id)
        }
        let id = loop.schedule(at: next) { [weak self, weak leg] in
            guard let self, let leg else { return }
            leg.timer = nil
            let now = ContinuousClock.now
            self.perform(leg.core.handleTimeout(now: now), on: leg, now: now)
            self.reschedule(leg)
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
            for callLegs in self.legs.values {
                for leg in callLegs.values where leg.started && !leg.reportedEnd && leg.core.state == .connected
                    && now - leg.lastReceived >= self.inactivityTimeout {
                    leg.reportedEnd = true
                    self.log.warning("media.leg.inactive", ["call": leg.callID, "leg": leg.leg.description])
                    self.report(.legInactive(leg.leg), leg.callID)
                }
            }
            if !self.legs.isEmpty { self.scheduleInactivityCheck() }
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

extension Party {
    /// How logs name the party's leg: a device by its device id.
    fileprivate var logName: String {
        switch self {
        case .device(let device): device.deviceID
        }
    }
}
