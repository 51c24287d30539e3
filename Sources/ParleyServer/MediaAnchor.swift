import Dispatch
import ParleyCallModel
import ParleyCallCore
import ParleyCrypto
import ParleyICECore
import ParleyMediaCore
import ParleyMediaLegCore
import ParleyNetCore
import ParleyNetLinux
import ParleyRTP
import ParleyStore
import ParleySTUN
import ParleyWireCore
import Synchronization

/// The server's media anchor: performs the call engine's `MediaInstruction`s and reports
/// `MediaEvent`s back. Each call owns one `MediaTopology`, chosen when its media is created
/// (`answerCaller`'s `MediaTopologyKind`), that holds its legs' cores and decides where
/// media goes: a `RelayBridge` between devices (legs in `.forward` mode, ICE-lite,
/// DTLS-SRTP, Opus passed through undecoded), or a `GatewayBridge` toward a SIP party (the
/// caller's leg as before, the SIP party's a plain RTP leg offering PCMU, PCMA, Opus and
/// telephone-event; transcoded on the gateway's 20 ms clock, RFC 4733 events both ways).
/// The anchor keeps what touches the system: one UDP socket per leg from the configured
/// port pool, the legs' timers and the topology's clock, the per application leg quota
/// and the inactivity check.
///
/// Threads: the methods the engine calls run on the engine's loop (`engineLoop`), which only
/// places a call and hands its instructions on. Every call lives on one media loop (an
/// `EventLoopGroup`, one loop per core, round-robin by call): its topology, its legs'
/// sockets and timers, and every packet it relays, so the two legs of a bridge share a
/// thread and relaying takes no lock. Instructions hop onto the call's media loop in the
/// order the engine gave them; reports hop back onto the engine's loop, where the engine
/// takes them as inputs. Nothing on a media loop waits for the engine, and the engine does
/// not wait for a media loop: an ended call's legs close on their loop and their final
/// statistics come back as an input (`closeAll(callID:now:done:)`). Only shutdown and the
/// counts for tests wait (`finishPendingCloses`, `legCount`).
final class MediaAnchor: @unchecked Sendable {
    // @unchecked: `calls`, `closed` are used on `engineLoop`'s thread only; a `CallMedia`
    // on its media loop's only; the rest is immutable or a Mutex.

    /// One call's media: its topology and the sockets and timers of its legs.
    private final class CallMedia: @unchecked Sendable {
        // @unchecked: created on the engine's loop, then used on `loop`'s thread only
        // (instructions hop there; its socket and timer callbacks run there).
        let callID: String
        let loop: any MediaLoop
        /// The receive buffers of `loop`, shared by the calls on it.
        let buffers: MediaLoopBuffers
        let topology: any MediaTopology<CallLegID>
        /// The topology when it is a gateway (DTMF is sent and reported through it); nil for
        /// a relay.
        let gateway: GatewayBridge<CallLegID>?
        var legs: [CallLegID: AnchoredLeg] = [:]
        var inactivityTimer: TimerID?
        /// The topology's own clock (a gateway's 20 ms tick): one timer at its next deadline.
        /// Never set for a room call: the room's clock (`RoomMedia.clock`) serves every seat.
        var topologyTimer: (id: TimerID, at: ContinuousClock.Instant)?
        /// The RTP timestamp of the last telephone event told to the engine, per leg: the
        /// core reports an event as it begins and again as it ends, the engine hears it once.
        var lastReportedEvent: [CallLegID: UInt32] = [:]
        /// Set when `closeAll` ran: later instructions find no call.
        var ended = false
        /// The room a conference call sits in (its topology is its `RoomSeat`); nil otherwise.
        let room: RoomMedia?
        /// The prompts of a call the server answered (`answerPromptCaller`); nil otherwise.
        private(set) var prompt: PromptTopology<CallLegID>?
        /// The answer its caller's leg gave (a call the server answered), given again when
        /// the call goes on to a callee.
        var promptAnswer: String?
        /// Whether a party holds the call (`setHold`): its legs are not checked for
        /// inactivity meanwhile, since a far side told `sendonly` stops sending (RFC 3264 §8.4).
        var held = false
        /// Whether the caller's leg is plain RTP: a call that came in over SIP
        /// (`answerSIPCaller`). Set on the engine's loop before the leg is made.
        var plainRTPCaller = false
        /// The recording the topology hands its audio to (`startRecording`); nil when none.
        var recording: CallRecording?

        init(callID: String, loop: any MediaLoop, buffers: MediaLoopBuffers, kind: MediaTopologyKind) {
            self.callID = callID
            self.loop = loop
            self.buffers = buffers
            room = nil
            switch kind {
            case .relay, .mixer:
                // A room call is made by `init(callID:room:buffers:)`; `.mixer` never gets here.
                topology = RelayBridge<CallLegID>()
                gateway = nil
            case .gateway:
                let gateway = GatewayBridge<CallLegID>()
                topology = gateway
                self.gateway = gateway
            }
        }

        /// A call the server answered itself (an IVR): its caller's leg and the prompts.
        init(callID: String, loop: any MediaLoop, buffers: MediaLoopBuffers, prompt: PromptTopology<CallLegID>) {
            self.callID = callID
            self.loop = loop
            self.buffers = buffers
            room = nil
            topology = prompt
            gateway = prompt.gateway
            self.prompt = prompt
        }

        /// A participant's call in `room`, on the room's loop.
        init(callID: String, room: RoomMedia, buffers: MediaLoopBuffers) {
            self.callID = callID
            self.loop = room.loop
            self.buffers = buffers
            self.room = room
            topology = RoomSeat(room: room, callID: callID)
            gateway = nil
        }
    }

    /// The calls sitting in one room, by call id (on the room's loop): where the mixer's
    /// actions for another participant go.
    private final class RoomMembers: @unchecked Sendable {
        // @unchecked: used on the room's loop only.
        var calls: [String: CallMedia] = [:]
    }

    /// A media loop's receive batch and the work buffer packets are relayed in, in place.
    private final class MediaLoopBuffers: @unchecked Sendable {
        // @unchecked: used on its loop's thread only.
        let batch = UDPReceiveBatch(capacity: 16, slotSize: 2048)
        /// A datagram plus room for the largest SRTP tag growth.
        let work = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048 + 64, alignment: 16)
        deinit { work.deallocate() }
    }

    /// What the media loops count together, read by the engine's loop.
    private struct Counts {
        var legs = 0
        var byApplication: [String: Int] = [:]
    }

    private let engineLoop: any Scheduler
    private let mediaLoops: [any MediaLoop]
    /// Stops the media loops (once, at `closeEverything` or when the anchor goes away).
    private let stopMediaLoops: @Sendable () -> Void
    /// The next media loop a new call is placed on (round-robin).
    private var nextLoop = 0
    /// The wall clock in Unix nanoseconds (RTCP sender reports).
    private let wallClockNanoseconds: @Sendable () -> Int64
    /// One set of receive buffers per media loop, used on that loop only.
    private let buffers: [ObjectIdentifier: MediaLoopBuffers]
    private let pool: any MediaPorts
    private let certificate: DTLSCertificate
    private let announcedHost: SocketAddress?
    private let inactivityTimeout: Duration
    /// Whether a SIP party's leg offers SDES-keyed SRTP (`ServerConfiguration.sipMediaOffersSDES`).
    private let sipOffersSDES: Bool
    private let log: ServerLog
    private let metrics: ServerMetrics
    private let reportToEngine: (MediaEvent, String) -> Void
    /// Hears a room's talkers (call ids, loudest first) on the engine's loop, once per
    /// paced change of the room: set by the engine, read on its loop only.
    var talkersChanged: ((RoomKey, [String]) -> Void)?
    private var calls: [String: CallMedia] = [:]
    /// The recordings in progress, by call id (engine loop): a call's `CallMedia` holds the
    /// same on its media loop.
    private var recordings: [String: CallRecording] = [:]
    /// Recordings of calls placed whose media is not made yet (a new call's instructions
    /// wait for its record's commit): started as the media is made, cancelled when the
    /// call ends first (engine loop).
    private var pendingRecordings: [String: CallRecording] = [:]
    /// Conference rooms with participants (engine loop), each with its members (room loop).
    private var rooms: [RoomKey: (media: RoomMedia, members: RoomMembers)] = [:]
    /// Conference callouts whose room could not be made, with why (engine loop): their
    /// callees' legs fail with it. Forgotten when the call closes.
    private var unseatedCallouts: [String: String] = [:]
    /// How a new room mixes.
    private let roomConfiguration: ConferenceMixer<String>.Configuration
    /// How long an empty room is kept (`ServerConfiguration.conferenceLinger`).
    private let roomLinger: Duration
    /// libopus complexity of a room call's leg (`ServerConfiguration.conferenceOpusComplexity`).
    private let roomOpusComplexity: Int
    private var closed = false
    private let counts = Mutex(Counts())
    /// Closes done on a media loop, waiting for the engine's loop to take their statistics.
    private let finished = Mutex<[(statistics: [CallLegID: MediaLegStatistics], done: @Sendable ([CallLegID: MediaLegStatistics]) -> Void)]>([])
    /// The shortest ICE consent expiry a leg gets, above the 4-6 s between a device's
    /// consent checks (RFC 7675 section 5.1).
    static let minimumConsentTimeout: Duration = .seconds(8)
    /// Legs one application may hold at once, so one tenant cannot take every port.
    let maxLegsPerApplication: Int

    /// - Parameters:
    ///   - loop: the engine's loop; `report` is called there.
    ///   - mediaLoopCount: media loops to start (clamped to 1...online cores).
    convenience init(loop: any Scheduler, mediaLoopCount: Int, configuration: ServerConfiguration, certificate: DTLSCertificate,
                     log: ServerLog, metrics: ServerMetrics, report: @escaping (MediaEvent, String) -> Void) throws(NetError) {
        let pool = try PortPool(host: configuration.mediaBindAddress, range: configuration.mediaPorts)
        let group = try EventLoopGroup(loopCount: mediaLoopCount, namePrefix: "parley-media")
        self.init(loop: loop, mediaLoops: group.loops, stopMediaLoops: {
            // Never from a media loop itself: shutdown joins the loops' threads.
            if !group.loops.contains(where: \.inEventLoop) { group.shutdown() }
        }, ports: pool, configuration: configuration, certificate: certificate, log: log, metrics: metrics,
        wallClockNanoseconds: ServerClock.unixNanoseconds, report: report)
    }

    /// The anchor over given media loops and ports (tests run it on a manual scheduler with
    /// sockets in memory).
    ///   - stopMediaLoops: stops the loops; called once.
    init(loop: any Scheduler, mediaLoops: [any MediaLoop], stopMediaLoops: @escaping @Sendable () -> Void, ports: any MediaPorts,
         configuration: ServerConfiguration, certificate: DTLSCertificate, log: ServerLog, metrics: ServerMetrics,
         wallClockNanoseconds: @escaping @Sendable () -> Int64, report: @escaping (MediaEvent, String) -> Void) {
        precondition(!mediaLoops.isEmpty, "the media anchor needs a media loop")
        // libsrtp's self-tests now, at start-up, not on the first call's media loop.
        MediaLegCore.prepareProcess()
        engineLoop = loop
        pool = ports
        self.mediaLoops = mediaLoops
        self.stopMediaLoops = stopMediaLoops
        self.wallClockNanoseconds = wallClockNanoseconds
        var buffers: [ObjectIdentifier: MediaLoopBuffers] = [:]
        for mediaLoop in mediaLoops { buffers[ObjectIdentifier(mediaLoop)] = MediaLoopBuffers() }
        self.buffers = buffers
        self.certificate = certificate
        announcedHost = configuration.mediaAnnouncedAddress
        inactivityTimeout = configuration.mediaInactivityTimeout
        sipOffersSDES = configuration.sipMediaOffersSDES
        self.log = log
        self.metrics = metrics
        reportToEngine = report
        maxLegsPerApplication = configuration.effectiveMaxMediaLegsPerApplication
        roomConfiguration = configuration.conferenceMixer
        roomLinger = configuration.conferenceLinger
        roomOpusComplexity = configuration.conferenceOpusComplexity
    }

    deinit {
        // Normally stopped by `closeEverything`; a server released without a shutdown
        // still stops its media threads.
        if !closed { stopMediaLoops() }
    }

    /// Media loops running (for the thread table and tests).
    var mediaLoopCount: Int { mediaLoops.count }

    /// Legs open now, over all calls, once every instruction given so far has run (engine loop).
    var legCount: Int {
        drainMediaLoops()
        return counts.withLock { $0.legs }
    }
    /// Ports of the pool in use, likewise.
    var portsInUse: Int {
        drainMediaLoops()
        return pool.allocatedCount
    }
    /// Legs an application's calls hold now.
    func legCount(applicationKey: String) -> Int { counts.withLock { $0.byApplication[applicationKey] ?? 0 } }

    // MARK: Instructions (engine loop)

    /// `applicationKey` is the call's application, whose leg quota new legs count against.
    func perform(_ instruction: MediaInstruction, applicationKey: String, now: ClockReading) {
        let callID = instruction.callID
        let call: CallMedia
        switch instruction {
        case .closeAll:
            unseatedCallouts[callID] = nil
            closeAll(callID: callID, now: now.instant) { _ in }
            return
        case .sendDTMF(_, let leg, let digits):
            // Only a gateway paces RFC 4733 packets of its own; a relay sends none. Digits
            // can be PINs: logs say how many, not which.
            guard let existing = calls[callID], existing.gateway != nil else {
                log.warning("media.dtmf.unsupported", ["call": callID, "leg": leg.description, "digits": String(digits.count)])
                return
            }
            call = existing
        case .answerSIPCaller(_, _, nil):
            if let existing = calls[callID] {
                if existing.prompt != nil { return reanswerPromptCaller(existing) }
                call = existing
            } else {
                guard !closed else {
                    reportToEngine(.legFailed(.caller, reason: "state: the media anchor is shut down"), callID)
                    return
                }
                let loop = mediaLoops[nextLoop % mediaLoops.count]
                nextLoop &+= 1
                call = CallMedia(callID: callID, loop: loop, buffers: buffers[ObjectIdentifier(loop)]!, kind: .gateway)
                call.plainRTPCaller = true
                calls[callID] = call
            }
        case .joinRoom(_, _, let room), .seatCallout(_, let room), .answerSIPCaller(_, _, let room?):
            if let existing = calls[callID] {
                call = existing
            } else {
                guard !closed, let seated = seat(callID, in: RoomKey(applicationKey: applicationKey, room: room)) else {
                    let reason = closed ? "state: the media anchor is shut down" : "codec: the room's mixer cannot start"
                    if case .seatCallout = instruction {
                        // A callout has no leg yet: its callees' offers (next) fail instead.
                        unseatedCallouts[callID] = reason
                    } else {
                        reportToEngine(.legFailed(.caller, reason: reason), callID)
                    }
                    return
                }
                call = seated
                if case .answerSIPCaller = instruction { call.plainRTPCaller = true }
                calls[callID] = call
            }
        case .answerCaller, .offerCallee:
            if let existing = calls[callID] {
                call = existing
            } else if case .offerCallee(_, let party) = instruction, let reason = unseatedCallouts[callID] {
                reportToEngine(.legFailed(.callee(party), reason: reason), callID)
                return
            } else {
                guard !closed else {
                    let leg: CallLegID = if case .offerCallee(_, let party) = instruction { .callee(party) } else { .caller }
                    reportToEngine(.legFailed(leg, reason: "state: the media anchor is shut down"), callID)
                    return
                }
                let loop = mediaLoops[nextLoop % mediaLoops.count]
                nextLoop &+= 1
                call = CallMedia(callID: callID, loop: loop, buffers: buffers[ObjectIdentifier(loop)]!, kind: instruction.topologyKind)
                calls[callID] = call
            }
        case .acceptAnswer(_, let party, _):
            guard let existing = calls[callID] else {
                reportToEngine(.legFailed(.callee(party), reason: "no media leg for this device"), callID)
                return
            }
            call = existing
        case .bridge, .closeLeg, .setHold:
            guard let existing = calls[callID] else { return }
            call = existing
        }
        if let recording = pendingRecordings.removeValue(forKey: callID) { attach(recording, to: call) }
        _ = call.loop.execute { [self] in
            perform(instruction, in: call, applicationKey: applicationKey, now: now)
        }
    }

    /// A new participant's call in the room `key` (engine loop): the room is made on its
    /// first participant, on the next media loop. Nil when its mixer cannot be made.
    private func seat(_ callID: String, in key: RoomKey) -> CallMedia? {
        let room: (media: RoomMedia, members: RoomMembers)
        if let existing = rooms[key] {
            room = existing
        } else {
            let loop = mediaLoops[nextLoop % mediaLoops.count]
            nextLoop &+= 1
            let media: RoomMedia
            do { media = try RoomMedia(key: key, loop: loop, configuration: roomConfiguration) } catch {
                log.error("media.room.failed", ["room": key.description, "error": "\(error)"])
                return nil
            }
            let members = RoomMembers()
            media.deliver = { [weak self, members] callID, actions in
                guard let self, let member = members.calls[callID], !member.ended else { return }
                self.perform(actions, in: member)
                // Only the member's leg timers: whoever called into the mixer moves the
                // room's clock once, after every member got its share.
                self.rescheduleLegs(in: member)
            }
            media.onTick = { [weak self, weak media] now in
                guard let self, let media else { return }
                self.tick(media, now: now)
            }
            room = (media, members)
            rooms[key] = room
            log.info("media.room.opened", ["room": key.description])
        }
        room.media.participants += 1
        let call = CallMedia(callID: callID, room: room.media, buffers: buffers[ObjectIdentifier(room.media.loop)]!)
        _ = room.media.loop.execute { room.members.calls[callID] = call }
        return call
    }

    /// What a room's clock did so far, as its loop sees it.
    struct RoomClockFigures: Sendable, Equatable {
        /// Times the room's one timer fired.
        var wakeUps: UInt64
        /// Ticks the room's mixer ran (`ConferenceMixer.counters.ticks`).
        var ticks: UInt64
        /// Mixes its `AudioMixer` made (one per tick).
        var mixes: UInt64
        /// Whether the room's timer is set now.
        var armed: Bool
    }

    /// The clock of the room `room` of `applicationKey` (engine loop; waits for the room's
    /// loop): nil when there is no such room. For tests and diagnostics.
    func roomClock(applicationKey: String, room: String) -> RoomClockFigures? {
        guard let media = rooms[RoomKey(applicationKey: applicationKey, room: room)]?.media else { return nil }
        return media.loop.runAndWait {
            RoomClockFigures(wakeUps: media.clockWakeUps, ticks: media.mixer.counters.ticks,
                             mixes: media.mixer.mixerCounters.ticks, armed: media.clock != nil)
        } ?? nil
    }

    /// What the mixer of a room says of each participant (engine loop): `deliver` gets it
    /// on the engine's loop, by call id, empty when the room has no media here.
    func roomState(applicationKey: String, room: String, deliver: @escaping @Sendable ([String: RoomParticipantMedia]) -> Void) {
        guard let media = rooms[RoomKey(applicationKey: applicationKey, room: room)]?.media else {
            _ = engineLoop.execute { deliver([:]) }
            return
        }
        let accepted = media.loop.execute { [engineLoop] in
            let talking = Set(media.mixer.talkers)
            var state: [String: RoomParticipantMedia] = [:]
            for id in media.mixer.legIDs {
                // A callout ringing several devices has a leg for each until one answers:
                // the one in the mix speaks for the call.
                let callID = RoomLegName.callID(of: id)
                guard media.mixedLeg(of: callID) == id else { continue }
                state[callID] = RoomParticipantMedia(
                    muted: media.mixer.isMuted(id) ?? false, onHold: media.mixer.isOnHold(id) ?? false, talking: talking.contains(id))
            }
            let result = state
            _ = engineLoop.execute { deliver(result) }
        }
        if !accepted { _ = engineLoop.execute { deliver([:]) } }
    }

    /// Mutes, unmutes, holds or resumes one participant of a room (engine loop); `done`
    /// gets whether the room's mixer had that participant, on the engine's loop.
    func control(_ command: ConferenceCommand, callID: String, applicationKey: String, room: String,
                 done: @escaping @Sendable (Bool) -> Void) {
        guard let media = rooms[RoomKey(applicationKey: applicationKey, room: room)]?.media else {
            _ = engineLoop.execute { done(false) }
            return
        }
        let accepted = media.loop.execute { [engineLoop, log] in
            let applied: Bool
            do throws(MediaTopologyError) {
                guard let leg = media.mixedLeg(of: callID) else { throw MediaTopologyError(.unknownLeg, "not in the room") }
                switch command {
                case .mute: try media.mixer.setMuted(true, leg: leg)
                case .unmute: try media.mixer.setMuted(false, leg: leg)
                case .onHold: try media.mixer.setOnHold(true, leg: leg)
                case .resume: try media.mixer.setOnHold(false, leg: leg)
                }
                applied = true
                log.info("media.room.control", ["room": media.key.description, "call": callID, "command": command.rawValue])
            } catch {
                applied = false
            }
            _ = engineLoop.execute { done(applied) }
        }
        if !accepted { _ = engineLoop.execute { done(false) } }
    }

    /// The rooms' figures now (engine loop): each room's loop is asked in turn; `deliver`
    /// gets the sum (worst lateness) on the engine's loop.
    func conferenceStatistics(deliver: @escaping @Sendable (ConferenceStatistics) -> Void) {
        let media = rooms.values.map(\.media)
        let total = Mutex(ConferenceStatistics())
        total.withLock { $0.rooms = media.count }
        let remaining = Mutex(media.count)
        guard !media.isEmpty else { return deliver(ConferenceStatistics()) }
        for room in media {
            let finish: @Sendable () -> Void = { [engineLoop] in
                let last = remaining.withLock { count -> Bool in
                    count -= 1
                    return count == 0
                }
                if last { _ = engineLoop.execute { deliver(total.withLock { $0 }) } }
            }
            let accepted = room.loop.execute {
                let mixer = room.mixer
                total.withLock { sum in
                    // By call: a callout ringing several devices has a leg for each.
                    sum.participants += Set(mixer.legIDs.map(RoomLegName.callID(of:))).count
                    sum.talkers += mixer.talkers.count
                    sum.tickLatenessP99 = max(sum.tickLatenessP99, mixer.lateness.percentile(0.99))
                    sum.tickLatenessMaximum = max(sum.tickLatenessMaximum, mixer.lateness.maximum)
                }
                finish()
            }
            if !accepted { finish() }
        }
    }

    /// A participant's call left its room (engine loop): the room goes with its last.
    private func leaveRoom(_ call: CallMedia) {
        guard let media = call.room, let room = rooms[media.key], room.media === media else { return }
        media.participants -= 1
        let members = room.members
        let callID = call.callID
        _ = media.loop.execute { members.calls[callID] = nil }
        guard media.participants <= 0 else { return }
        guard roomLinger > .zero, !closed else { return closeRoom(media) }
        // Kept for a participant who comes back; closed unless someone joined by then.
        engineLoop.schedule(after: roomLinger) { [weak self, weak media] in
            guard let self, let media, media.participants <= 0 else { return }
            self.closeRoom(media)
        }
    }

    /// Forgets an empty room (engine loop) and stops its clock (on its loop): its next
    /// participant makes a new one.
    private func closeRoom(_ media: RoomMedia) {
        guard rooms[media.key]?.media === media else { return }
        rooms[media.key] = nil
        _ = media.loop.execute { media.closeClock() }
        log.info("media.room.closed", ["room": media.key.description])
        // So the engine forgets what it kept of the room's talkers.
        talkersChanged?(media.key, [])
    }

    /// Closes every leg of a call and returns their final statistics (for the record),
    /// waiting for the call's media loop to do it: for shutdown and tests. The engine's
    /// loop uses `closeAll(callID:now:done:)`, which does not wait.
    func closeAll(callID: String, now: ContinuousClock.Instant) -> [CallLegID: MediaLegStatistics] {
        recordings[callID] = nil
        pendingRecordings.removeValue(forKey: callID)?.cancel("the call ended before its media was made")
        guard let call = calls.removeValue(forKey: callID) else { return [:] }
        let statistics = call.loop.runAndWait { [self] in closeCall(call, now: now) } ?? [:]
        leaveRoom(call)
        return statistics
    }

    /// Closes every leg of a call on its media loop without waiting; `done` gets their
    /// final statistics on the engine's loop, always later (also for a call without
    /// media), in the order the closes finished.
    func closeAll(callID: String, now: ContinuousClock.Instant,
                  done: @escaping @Sendable ([CallLegID: MediaLegStatistics]) -> Void) {
        // Its recording, if any, is completed as its legs close (`closeCall`).
        recordings[callID] = nil
        pendingRecordings.removeValue(forKey: callID)?.cancel("the call ended before its media was made")
        guard let call = calls.removeValue(forKey: callID) else {
            finished.withLock { $0.append(([:], done)) }
            _ = engineLoop.execute { [self] in deliverFinishedCloses() }
            return
        }
        leaveRoom(call)
        let accepted = call.loop.execute { [self] in
            let statistics = closeCall(call, now: now)
            finished.withLock { $0.append((statistics, done)) }
            _ = engineLoop.execute { [self] in deliverFinishedCloses() }
        }
        if !accepted {
            finished.withLock { $0.append(([:], done)) }
            _ = engineLoop.execute { [self] in deliverFinishedCloses() }
        }
    }

    /// Hands finished closes to their `done` (engine loop).
    private func deliverFinishedCloses() {
        let ready = finished.withLock { finished in
            defer { finished = [] }
            return finished
        }
        for (statistics, done) in ready { done(statistics) }
    }

    /// Waits for the media loops to finish the closes handed to them and hands their
    /// statistics over now (engine loop, at shutdown, before the last records are written).
    func finishPendingCloses() {
        drainMediaLoops()
        deliverFinishedCloses()
    }

    /// The statistics of a call's open legs, handed to `deliver` on the engine's loop.
    func statistics(callID: String, deliver: @escaping @Sendable ([CallLegID: MediaLegStatistics]) -> Void) {
        guard let call = calls[callID] else { return }
        _ = call.loop.execute { [engineLoop] in
            var result: [CallLegID: MediaLegStatistics] = [:]
            for id in call.legs.keys {
                result[id] = call.topology.withLeg(id) { (core: inout MediaLegCore) in core.statistics }
            }
            let figures = result
            _ = engineLoop.execute { deliver(figures) }
        }
    }

    /// Closes every leg of every call and stops the media loops (shutdown).
    func closeEverything() {
        let now = engineLoop.now
        for callID in Array(calls.keys) { _ = closeAll(callID: callID, now: now) }
        closed = true
        stopMediaLoops()
    }

    /// Returns once every media loop has run what was handed to it before.
    private func drainMediaLoops() {
        for loop in mediaLoops { _ = loop.runAndWait {} }
    }

    /// Hands a report to the engine, on its loop.
    private func report(_ event: MediaEvent, _ callID: String) {
        _ = engineLoop.execute { [self] in reportToEngine(event, callID) }
    }

    // MARK: Instructions (the call's media loop)

    private func perform(_ instruction: MediaInstruction, in call: CallMedia, applicationKey: String, now: ClockReading) {
        run(instruction, in: call, applicationKey: applicationKey, now: now)
        // Any call into the topology may move its clock or a leg's deadline.
        rescheduleAll(in: call)
    }

    private func run(_ instruction: MediaInstruction, in call: CallMedia, applicationKey: String, now: ClockReading) {
        let callID = call.callID
        switch instruction {
        case .answerCaller(_, let offer, _), .joinRoom(_, let offer, _), .answerSIPCaller(_, let offer, _):
            do throws(MediaLegError) {
                let leg = try openLeg(.caller, in: call, applicationKey: applicationKey, now: now)
                let answer = try call.topology.withLeg(.caller) { (core: inout MediaLegCore) throws(MediaLegError) in
                    try core.answer(offer: offer)
                } ?? ""
                try start(leg, in: call, now: now.instant)
                if call.prompt != nil { call.promptAnswer = answer }
                if let room = call.room {
                    // In the mix from now on: its audio counts once its leg connects.
                    do throws(MediaTopologyError) { try call.topology.join(.caller) } catch {
                        throw MediaLegError(.state, "cannot join room \(room.key.room): \(error)")
                    }
                    log.info("media.room.joined", ["call": callID, "room": room.key.description])
                }
                log.info("media.leg.answered", ["call": callID, "leg": "caller", "port": String(leg.socket.localAddress.port)])
                report(.callerLegReady(sdp: answer), callID)
            } catch {
                closeLeg(.caller, in: call, now: now.instant)
                log.warning("media.leg.failed", ["call": callID, "leg": "caller", "reason": error.description])
                report(.legFailed(.caller, reason: error.description), callID)
            }
        case .offerCallee(_, let party):
            do throws(MediaLegError) {
                if case .sip = party, call.gateway == nil {
                    throw MediaLegError(.state, "a SIP party's leg needs a gateway call; this call's media relays between devices")
                }
                let leg = try openLeg(.callee(party), in: call, applicationKey: applicationKey, now: now)
                let offer = try call.topology.withLeg(.callee(party)) { (core: inout MediaLegCore) throws(MediaLegError) in
                    try core.makeOffer()
                } ?? ""
                log.info("media.leg.offered", ["call": callID, "leg": party.logName, "port": String(leg.socket.localAddress.port)])
                report(.calleeLegReady(party, sdp: offer), callID)
            } catch {
                closeLeg(.callee(party), in: call, now: now.instant)
                log.warning("media.leg.failed", ["call": callID, "leg": party.logName, "reason": error.description])
                report(.legFailed(.callee(party), reason: error.description), callID)
            }
        case .acceptAnswer(_, let party, let answer):
            guard let leg = call.legs[.callee(party)] else {
                report(.legFailed(.callee(party), reason: "no media leg for this device"), callID)
                return
            }
            do throws(MediaLegError) {
                _ = try call.topology.withLeg(.callee(party)) { (core: inout MediaLegCore) throws(MediaLegError) in
                    try core.acceptAnswer(answer)
                }
                try start(leg, in: call, now: now.instant)
            } catch {
                log.warning("media.leg.failed", ["call": callID, "leg": party.logName, "reason": error.description])
                report(.legFailed(.callee(party), reason: error.description), callID)
            }
        case .bridge(_, let party):
            guard !call.ended else { return }
            do throws(MediaTopologyError) {
                // A room call is bridged only for a callout: its answering callee joins the
                // mix (the room has no leg; a call to a room is mixed from its answer).
                if call.room == nil { try call.topology.join(.caller) }
                try call.topology.join(.callee(party))
                // A gateway relays or transcodes once both legs negotiated; the rest relay or mix.
                let path = call.gateway.map { $0.path.rawValue } ?? (call.room == nil ? "relay" : "room")
                log.info("media.bridge", ["call": callID, "callee": party.logName, "path": path])
            } catch {
                // A leg that failed is gone already and was reported; the call ends on that report.
                log.warning("media.bridge.refused", ["call": callID, "callee": party.logName, "reason": error.description])
            }
            // A leg connected before the bridge existed was reported then; nothing to redo.
        case .closeLeg(_, let leg):
            closeLeg(leg, in: call, now: now.instant)
        case .setHold(_, let held, let silenced):
            guard !call.ended else { return }
            if call.held && !held {
                // Resumed: the legs' silence while held is not inactivity.
                let now = call.loop.now
                for leg in call.legs.values { leg.lastReceived = now }
            }
            call.held = held
            call.gateway?.isSilenced = silenced
            log.info("media.hold", ["call": callID, "held": String(held), "silenced": String(silenced && call.gateway != nil)])
        case .sendDTMF(_, let leg, let digits):
            guard let gateway = call.gateway, !call.ended else { return }
            if !gateway.sendDTMF(digits, on: leg) {
                log.warning("media.dtmf.refused", [
                    "call": callID, "leg": leg.description, "digits": String(digits.count),
                    "reason": "not 1-64 of 0-9 * # A-D, or the leg is not joined, connected and negotiated telephone-event",
                ])
            }
        case .closeAll, .seatCallout:
            break  // handled on the engine's loop
        }
    }

    /// Closes every leg of the call; returns their final statistics.
    private func closeCall(_ call: CallMedia, now: ContinuousClock.Instant) -> [CallLegID: MediaLegStatistics] {
        call.ended = true
        endRecording(of: call)
        if let timer = call.inactivityTimer { call.loop.cancel(timer) }
        call.inactivityTimer = nil
        if let timer = call.topologyTimer { call.loop.cancel(timer.id) }
        call.topologyTimer = nil
        var statistics: [CallLegID: MediaLegStatistics] = [:]
        for id in Array(call.legs.keys) {
            if let final = shut(id, of: call, now: now) { statistics[id] = final }
        }
        // The last leg out of the mixer stops the room's clock.
        call.room?.rescheduleClock()
        return statistics
    }

    // MARK: Recording (docs/backend.md, "Recording")

    /// Why `callID` cannot be recorded now, or nil when it can (engine loop): its media
    /// must be decoded (a gateway, a call the server answered), not relayed between apps
    /// nor mixed in a room, and the call not recorded already. `placed`: the call is in
    /// the engine, its media made or to be made (a new call's media waits for its
    /// record's commit); else its media must be here now.
    func recordingRefusal(callID: String, placed: Bool) -> String? {
        if recordings[callID] != nil || pendingRecordings[callID] != nil { return "the call is being recorded already" }
        guard let call = calls[callID] else { return placed ? nil : "the call has no media here" }
        return Self.recordingRefusal(of: call)
    }

    private static func recordingRefusal(of call: CallMedia) -> String? {
        if call.room != nil { return "a conference call's media is mixed in its room, not recorded per call" }
        if call.gateway == nil { return "the call's media is relayed between apps undecoded, not recorded" }
        return nil
    }

    /// Hands the call's audio to `recording` from its next tick on, or from its media's
    /// making (engine loop; check `recordingRefusal` first). A call that ends meanwhile
    /// completes it; one that ends before its media was made cancels it.
    func startRecording(callID: String, _ recording: CallRecording) {
        guard recordings[callID] == nil, pendingRecordings[callID] == nil else { return recording.cancel("the call is being recorded already") }
        guard let call = calls[callID] else {
            pendingRecordings[callID] = recording
            return
        }
        attach(recording, to: call)
    }

    /// Starts `recording` on the call's media (engine loop), or cancels it when the media
    /// made is not one that can be recorded.
    private func attach(_ recording: CallRecording, to call: CallMedia) {
        if let reason = Self.recordingRefusal(of: call) { return recording.cancel(reason) }
        recordings[call.callID] = recording
        let accepted = call.loop.execute {
            guard !call.ended else { return recording.finish() }
            call.recording = recording
            if let prompt = call.prompt {
                prompt.startRecording(into: recording)
            } else {
                call.gateway?.startRecording(caller: .caller, into: recording)
            }
        }
        if !accepted { recording.finish() }
    }

    /// Ends the call's recording (engine loop): its file is completed on the writer's
    /// queue. Nothing when the call is not recorded.
    func stopRecording(callID: String) {
        if let pending = pendingRecordings.removeValue(forKey: callID) {
            return pending.cancel("stopRecording came before the call's media was made")
        }
        guard let recording = recordings.removeValue(forKey: callID) else { return }
        guard let call = calls[callID] else { return recording.finish() }
        let accepted = call.loop.execute { [self] in
            if call.recording === recording { endRecording(of: call) } else { recording.finish() }
        }
        if !accepted { recording.finish() }
    }

    /// Takes the call's recording off its topology and completes it (the call's media loop).
    private func endRecording(of call: CallMedia) {
        guard let recording = call.recording else { return }
        call.recording = nil
        if let prompt = call.prompt { prompt.stopRecording() } else { call.gateway?.stopRecording() }
        recording.finish()
    }

    // MARK: Legs (the call's media loop)

    private func openLeg(_ id: CallLegID, in call: CallMedia, applicationKey: String, now: ClockReading) throws(MediaLegError) -> AnchoredLeg {
        guard !call.ended else { throw MediaLegError(.state, "the call's media is closed") }
        if call.legs[id] != nil { _ = shut(id, of: call, now: now.instant) }
        let held = counts.withLock { counts -> Int? in
            let held = counts.byApplication[applicationKey] ?? 0
            guard held < maxLegsPerApplication else { return held }
            counts.byApplication[applicationKey] = held + 1
            counts.legs += 1
            return nil
        }
        if let held {
            throw MediaLegError(.socket, "the application holds \(held) media legs, its limit (maxMediaLegsPerApplication)")
        }
        let socket: any MediaSocket
        do { socket = try pool.openMediaSocket() } catch {
            release(applicationKey)
            throw MediaLegError(.socket, "no media port: \(error)")
        }
        let host = announcedHost ?? socket.localAddress
        let local = ICETransportAddress(ip: STUNIPAddress(bytes: host.hostBytes) ?? .ipv4(0), port: socket.localAddress.port)
        var configuration: MediaLegConfiguration
        if case .callee(.sip) = id {
            configuration = Self.plainRTPConfiguration(offersSDES: sipOffersSDES)
            if call.plainRTPCaller {
                // A bridge: offer the codec the caller runs first, so that it can relay.
                let running = call.topology.withLeg(.caller) { (core: inout MediaLegCore) in core.statistics.codec } ?? nil
                configuration.codecs = Self.bridgedCalleeCodecs(callerCodec: running, from: configuration.codecs)
            }
        } else if id == .caller, call.plainRTPCaller {
            // A SIP caller's leg answers its INVITE's offer: plain RTP as for a SIP callee.
            configuration = Self.plainRTPConfiguration(offersSDES: sipOffersSDES)
        } else {
            configuration = MediaLegConfiguration(iceMode: .lite, certificate: certificate)
            configuration.codecs = [.opus]
            // Consent (RFC 7675) for an ICE-lite leg is the device's checks, every 4-6 s: a
            // shorter expiry would fail talking legs between two checks. A shorter media
            // timeout still ends silent calls through the inactivity check (packets).
            configuration.consentTimeout = max(inactivityTimeout, Self.minimumConsentTimeout)
            configuration.consentDisconnectedAfter = min(.seconds(10), inactivityTimeout)
        }
        configuration.mediaMode = call.topology.mediaMode(for: id)
        // A room's shared encoder runs at its listeners' configuration, so every leg of
        // the room gets the room's complexity and they keep sharing one encode.
        // A room's legs decode to and encode from the room's mixing rate: at 16 kHz libopus
        // works at 16 kHz both ways and nothing is resampled to 48 kHz and back.
        if call.room != nil {
            configuration.opusComplexity = roomOpusComplexity
            configuration.audioRate = roomConfiguration.mixer.sampleRate
        }
        let core = MediaLegCore(configuration: configuration, localAddresses: [local],
                                now: ClockReading(instant: now.instant, unixNanoseconds: wallClockNanoseconds()),
                                random: SystemRandomNumberGenerator())
        let leg = AnchoredLeg(callID: call.callID, leg: id, socket: socket, localICE: local, now: now.instant)
        do {
            try call.loop.watch(socket, onReadable: { [weak self, weak leg, weak call] in
                guard let self, let leg, let call else { return }
                self.readable(leg, in: call)
            })
            leg.registered = true
        } catch {
            socket.close()
            release(applicationKey)
            throw MediaLegError(.socket, "cannot watch \(socket.localAddress): \(error)")
        }
        call.topology.add(id, core: core)
        call.legs[id] = leg
        leg.countedApplication = applicationKey
        scheduleInactivityCheck(call)
        return leg
    }

    /// Gives a leg's place in its application's quota back.
    /// A SIP party's leg: plain RTP to the address its SDP names, latching within the
    /// transport's window; our `c=` is the announced address.
    private static func plainRTPConfiguration(offersSDES: Bool) -> MediaLegConfiguration {
        var configuration = MediaLegConfiguration(plainRTP: PlainRTPTransport.Options(offersSDES: offersSDES))
        // G.711 first: a trunk toward the PSTN takes the first codec it shares, and PSTN
        // audio is G.711 already, so nothing is transcoded twice; Opus stays for SIP phones
        // that prefer it.
        configuration.codecs = [.pcmu, .pcma, .opus]
        // RFC 2198 RED is WebRTC's; a SIP peer gets plain Opus.
        configuration.opusRedundancy = false
        return configuration
    }

    private func release(_ applicationKey: String) {
        counts.withLock { counts in
            let left = (counts.byApplication[applicationKey] ?? 1) - 1
            counts.byApplication[applicationKey] = left > 0 ? left : nil
            counts.legs -= 1
        }
    }

    private func start(_ leg: AnchoredLeg, in call: CallMedia, now: ContinuousClock.Instant) throws(MediaLegError) {
        guard !leg.started else { return }
        leg.started = true
        leg.lastReceived = now
        perform(try call.topology.start(leg.leg, now: now), in: call)
        // A device starts its checks as it sends its answer, so the first can arrive before
        // the answer reached this leg; answered now, it spares the device a retransmission
        // (250 ms and more).
        var counted = MediaCounts()
        for early in leg.takeEarly() {
            let work = call.buffers.work
            early.bytes.withUnsafeBytes { work.copyMemory(from: $0) }
            deliver(length: early.bytes.count, from: early.from, to: leg, in: call, now: now, counting: &counted)
        }
        flush(counted)
        reschedule(leg, in: call)
    }

    private func closeLeg(_ id: CallLegID, in call: CallMedia, now: ContinuousClock.Instant) {
        guard call.legs[id] != nil else { return }
        _ = shut(id, of: call, now: now)
    }

    /// Sends the leg's goodbye, stops its timer, closes its socket (returning the port) and
    /// takes it out of the call's topology; returns its final statistics.
    private func shut(_ id: CallLegID, of call: CallMedia, now: ContinuousClock.Instant) -> MediaLegStatistics? {
        guard let leg = call.legs[id] else { return nil }
        leg.reportedEnd = true
        if let application = leg.countedApplication {
            leg.countedApplication = nil
            release(application)
        }
        let removed = call.topology.remove(id, now: now)
        if let removed { perform(removed.actions, in: call) }
        call.legs[id] = nil
        if let timer = leg.timer { call.loop.cancel(timer.id) }
        leg.timer = nil
        if leg.registered { call.loop.unwatch(leg.socket); leg.registered = false }
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
        let batch = call.buffers.batch
        let work = call.buffers.work
        var counted = MediaCounts()
        for _ in 0..<8 {  // bounded per wake-up so the other legs on the loop get their turn
            let count: Int
            do { count = try leg.socket.receive(into: batch) } catch {
                log.warning("media.receive.failed", ["call": leg.callID, "leg": leg.leg.description, "error": "\(error)"])
                return
            }
            if count == 0 { break }
            let now = call.loop.now
            leg.lastReceived = now
            for index in 0..<count {
                let payload = batch.payload(at: index)
                let source = batch.source(at: index)
                let from = ICETransportAddress(ip: STUNIPAddress(bytes: source.hostBytes) ?? .ipv4(0), port: source.port)
                guard leg.started else {
                    leg.keepEarly(payload, from: from)
                    continue
                }
                work.copyMemory(from: payload)  // slots hold 2048 bytes; the work buffer 64 more
                deliver(length: payload.count, from: from, to: leg, in: call, now: now, counting: &counted)
            }
            if count < batch.capacity { break }
        }
        flush(counted)
        rescheduleAll(in: call)
    }

    /// Hands the datagram in the call's work buffer to the leg's core and sends what it
    /// forwards or answers.
    private func deliver(length: Int, from: ICETransportAddress, to leg: AnchoredLeg, in call: CallMedia,
                         now: ContinuousClock.Instant, counting counted: inout MediaCounts) {
        let work = call.buffers.work
        let receipt = call.topology.receive(buffer: work, length: length, from: from, on: leg.leg, local: leg.localICE, now: now)
        if let send = receipt.send, let out = call.legs[send.leg] {
            if let destination = out.destination(send.to) {
                _ = try? out.socket.send(UnsafeRawBufferPointer(rebasing: work[..<send.length]), to: destination)
            }
        }
        perform(receipt.actions, in: call, counting: &counted)
    }

    /// Packets counted for `ServerMetrics`, added there once per batch.
    private struct MediaCounts {
        var forwarded = 0
        var received = 0
        var dropped = 0
    }

    private func flush(_ counted: MediaCounts) {
        guard counted.forwarded + counted.received + counted.dropped > 0 else { return }
        metrics.update {
            $0.mediaPacketsForwarded += counted.forwarded
            $0.mediaPacketsReceived += counted.received
            $0.mediaPacketsDropped += counted.dropped
        }
    }

    private func perform(_ actions: [MediaTopologyAction<CallLegID>], in call: CallMedia) {
        var counted = MediaCounts()
        perform(actions, in: call, counting: &counted)
        flush(counted)
    }

    private func perform(_ actions: [MediaTopologyAction<CallLegID>], in call: CallMedia, counting counted: inout MediaCounts) {
        for action in actions {
            switch action {
            case .send(let id, let bytes, _, let to):
                guard let leg = call.legs[id], let destination = leg.destination(to) else { continue }
                _ = try? leg.socket.send(bytes, to: destination)
            case .stateChanged(let id, let state):
                if let leg = call.legs[id] { stateChanged(leg, in: call, to: state) }
            case .receivedMedia:
                counted.received += 1
            case .forwarded:
                counted.forwarded += 1
            case .receivedTelephoneEvent(let id, let event, let timestamp):
                receivedTelephoneEvent(event, timestamp: timestamp, on: id, in: call)
            case .dropped:
                counted.dropped += 1
            }
        }
    }

    /// A gateway call tells the engine each DTMF key once, as its event begins (or as it
    /// ends when its first packets were lost); the gateway itself re-sends it on the other
    /// leg. A relay call's events are only logged, as before (DTMF between two apps is not
    /// a feature).
    private func receivedTelephoneEvent(_ event: TelephoneEvent, timestamp: UInt32, on id: CallLegID, in call: CallMedia) {
        log.info("media.dtmf.received", [
            "call": call.callID, "leg": id.description,
            "event": TelephoneEvent.key(for: event.event).map(String.init) ?? String(event.event),
            "end": event.isEnd ? "true" : "false", "timestamp": String(timestamp),
        ])
        guard call.gateway != nil, let key = event.key, call.lastReportedEvent[id] != timestamp else { return }
        call.lastReportedEvent[id] = timestamp
        report(.dtmfReceived(id, digits: String(key)), call.callID)
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
    /// have moved, and so may the call's clock: its topology's, or its room's (one for
    /// every seat of the room).
    private func rescheduleAll(in call: CallMedia) {
        if let prompt = call.prompt { reportPromptEvents(prompt, of: call) }
        rescheduleLegs(in: call)
        if let room = call.room { room.rescheduleClock() } else { rescheduleTopology(call) }
    }

    private func rescheduleLegs(in call: CallMedia) {
        for leg in call.legs.values { reschedule(leg, in: call) }
    }

    /// Keeps the call's one topology timer at `nextTopologyDeadline` (none for a relay, nor
    /// for a gateway with no leg joined; a room call's clock is its room's).
    private func rescheduleTopology(_ call: CallMedia) {
        let next = call.ended ? nil : call.topology.nextTopologyDeadline
        if let timer = call.topologyTimer {
            if timer.at == next { return }
            call.loop.cancel(timer.id)
            call.topologyTimer = nil
        }
        guard let next else { return }
        let id = call.loop.schedule(at: next) { [weak self, weak call] in
            guard let self, let call else { return }
            call.topologyTimer = nil
            guard !call.ended else { return }
            self.perform(call.topology.handleTopologyTimeout(now: call.loop.now), in: call)
            self.rescheduleAll(in: call)
        }
        call.topologyTimer = (id, next)
    }

    /// The room's clock fired (its loop): the mixer runs the ticks due, once for the whole
    /// room, each participant's call sends its share and moves its leg's timers, and the
    /// talkers are reported. The room's clock is moved by its timer after this.
    private func tick(_ room: RoomMedia, now: ContinuousClock.Instant) {
        room.distribute(room.mixer.handleTopologyTimeout(now: now))
        reportTalkers(of: room, now: now)
    }

    /// Hands the room's talkers to the engine when they changed (the room's loop, on the
    /// room's clock, once a tick): a change is reported once for the room, paced by
    /// `talkerPacer`.
    private func reportTalkers(of room: RoomMedia, now: ContinuousClock.Instant) {
        for case .talkersChanged(let talkers) in room.mixer.takeEvents() { room.talkerPacer.note(talkers.map(RoomLegName.callID(of:))) }
        guard let talkers = room.talkerPacer.due(now: now) else { return }
        let key = room.key
        _ = engineLoop.execute { [self] in talkersChanged?(key, talkers) }
    }

    private func reschedule(_ leg: AnchoredLeg, in call: CallMedia) {
        guard let next = call.topology.nextDeadline(of: leg.leg), leg.registered else {
            if let timer = leg.timer { call.loop.cancel(timer.id); leg.timer = nil }
            return
        }
        if let timer = leg.timer {
            if timer.at == next { return }
            call.loop.cancel(timer.id)
        }
        let id = call.loop.schedule(at: next) { [weak self, weak leg, weak call] in
            guard let self, let leg, let call else { return }
            leg.timer = nil
            let now = call.loop.now
            self.perform(call.topology.handleTimeout(of: leg.leg, now: now), in: call)
            self.rescheduleAll(in: call)
        }
        leg.timer = (id, next)
    }

    /// Once a second while the call has legs: a connected leg that heard nothing from its
    /// device for `inactivityTimeout` is reported inactive (consent expiry reports it failed).
    private func scheduleInactivityCheck(_ call: CallMedia) {
        guard call.inactivityTimer == nil, !call.ended else { return }
        let interval = min(Duration.seconds(1), inactivityTimeout / 4)
        call.inactivityTimer = call.loop.schedule(after: interval) { [weak self, weak call] in
            guard let self, let call else { return }
            call.inactivityTimer = nil
            let now = call.loop.now
            for leg in call.legs.values where !call.held && leg.started && !leg.reportedEnd
                && call.topology.withLeg(leg.leg, { (core: inout MediaLegCore) in core.state }) == .connected
                && now - leg.lastReceived >= self.inactivityTimeout {
                leg.reportedEnd = true
                self.log.warning("media.leg.inactive", ["call": leg.callID, "leg": leg.leg.description])
                self.report(.legInactive(leg.leg), leg.callID)
            }
            if !call.legs.isEmpty { self.scheduleInactivityCheck(call) }
        }
    }

    // MARK: Calls the server answered (an IVR; docs/backend.md)

    /// Hears the prompt events of calls the server answered, by call id (engine loop).
    var promptEvents: ((String, PromptTopology<CallLegID>.Event) -> Void)?

    /// Answers a SIP caller's offer with a leg whose other end is the server
    /// (`PromptTopology`): reported as `answerSIPCaller` reports (`callerLegReady`, then
    /// `legConnected`), with prompts played through `withPrompts` (engine loop).
    func answerPromptCaller(callID: String, offer: String, applicationKey: String, now: ClockReading) {
        guard calls[callID] == nil, !closed else {
            reportToEngine(.legFailed(.caller, reason: closed ? "state: the media anchor is shut down" : "state: the call has media already"), callID)
            return
        }
        let loop = mediaLoops[nextLoop % mediaLoops.count]
        nextLoop &+= 1
        let call = CallMedia(callID: callID, loop: loop, buffers: buffers[ObjectIdentifier(loop)]!, prompt: PromptTopology())
        call.plainRTPCaller = true
        calls[callID] = call
        _ = call.loop.execute { [self] in
            call.prompt?.playInto(.caller)
            perform(.answerSIPCaller(callID: callID, offer: offer, room: nil), in: call, applicationKey: applicationKey, now: now)
        }
    }

    /// Offers a plain RTP leg to the SIP callee of a callout the server places itself
    /// (`ServerCallouts`), whose other end is the server (`PromptTopology`): reported as
    /// `offerCallee` reports (`calleeLegReady` with the offer), then, once `acceptAnswer`
    /// gave it the callee's answer, `legConnected`. Prompts play into it once
    /// `withPrompts` says `playInto` (at the answer: no clock runs while it rings) (engine loop).
    func offerPromptCallee(callID: String, party: Party, applicationKey: String, now: ClockReading) {
        guard calls[callID] == nil, !closed else {
            reportToEngine(.legFailed(.callee(party), reason: closed ? "state: the media anchor is shut down" : "state: the call has media already"), callID)
            return
        }
        let loop = mediaLoops[nextLoop % mediaLoops.count]
        nextLoop &+= 1
        let call = CallMedia(callID: callID, loop: loop, buffers: buffers[ObjectIdentifier(loop)]!, prompt: PromptTopology())
        calls[callID] = call
        _ = call.loop.execute { [self] in
            perform(.offerCallee(callID: callID, party: party), in: call, applicationKey: applicationKey, now: now)
        }
    }

    /// A call the server answered goes on to a callee (the registry starts it as any call
    /// in, whose first instruction is `answerSIPCaller`): its caller's leg stays as it is, so
    /// the caller's dialog and media do not change; its answer and its state are reported
    /// again as a new leg's would be. `bridge` then joins it in the inner gateway.
    private func reanswerPromptCaller(_ call: CallMedia) {
        _ = call.loop.execute { [self] in
            guard !call.ended, let sdp = call.promptAnswer else {
                report(.legFailed(.caller, reason: "state: the server-answered caller's leg is gone"), call.callID)
                return
            }
            call.prompt?.stopPlaying()
            report(.callerLegReady(sdp: sdp), call.callID)
            if call.topology.withLeg(.caller, { (core: inout MediaLegCore) in core.state }) == .connected {
                report(.legConnected(.caller), call.callID)
            }
        }
    }

    /// Runs `body` on the prompts of a call the server answered, on its media loop; false
    /// when the call has no prompts (engine loop).
    @discardableResult
    func withPrompts(callID: String, _ body: @escaping @Sendable (PromptTopology<CallLegID>) -> Void) -> Bool {
        guard let call = calls[callID], call.prompt != nil else { return false }
        _ = call.loop.execute { [self] in
            guard !call.ended, let prompt = call.prompt else { return }
            body(prompt)
            rescheduleAll(in: call)
        }
        return true
    }

    /// Hands a prompt topology's events to the engine (the call's media loop).
    private func reportPromptEvents(_ prompt: PromptTopology<CallLegID>, of call: CallMedia) {
        let events = prompt.takeEvents()
        guard !events.isEmpty else { return }
        let callID = call.callID
        _ = engineLoop.execute { [self] in
            for event in events { promptEvents?(callID, event) }
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

extension MediaInstruction {
    /// The topology a call's media gets when this instruction creates it: what
    /// `answerCaller` says, else what its party needs.
    fileprivate var topologyKind: MediaTopologyKind {
        switch self {
        case .answerCaller(_, _, let topology): topology
        case .joinRoom, .seatCallout, .answerSIPCaller(_, _, .some): .mixer
        case .answerSIPCaller(_, _, nil): .gateway
        case .offerCallee(_, .sip): .gateway
        default: .relay
        }
    }
}

extension Party {
    /// How logs name the party's leg: a device by its device id, a SIP party by its
    /// destination.
    fileprivate var logName: String {
        switch self {
        case .device(let device): device.deviceID
        case .sip(let party): party.description
        case .room(let party): party.description
        }
    }
}
