import ParleyCallCore
import ParleyICECore
import ParleyMediaCore
import ParleyMediaLegCore
import ParleyNetCore

/// One conference room's media: its mixer, on one media loop, shared by the calls of its
/// participants (each a call of its own, from an app to the room), and the room's clock.
///
/// The mixer names legs by call id. Each participant's call sees the room through a
/// `RoomSeat`, so the media anchor runs a room call as any other for its leg (socket, the
/// leg's own ICE, DTLS and RTCP deadlines, statistics, inactivity): its one leg is `.caller`.
/// The mixer's 20 ms tick is the room's, not a seat's: one timer per room (`clock`), at
/// the mixer's `nextTopologyDeadline`, runs each tick once for every participant, so a
/// room of N wakes its loop once a tick, not N times.
///
/// Threads: created on the engine's loop, then used on `loop`'s thread only (every call of
/// the room is placed on that loop), but for `participants`, which the engine's loop keeps.
final class RoomMedia: @unchecked Sendable {
    /// The application's key and the conference id: rooms never span applications.
    let key: RoomKey
    let loop: any MediaLoop
    let mixer: ConferenceMixer<String>
    /// Performs actions for a participant's leg, in that participant's call (set by the
    /// anchor): the mixer's tick sends to every participant at once.
    var deliver: ((String, [MediaTopologyAction<CallLegID>]) -> Void)?
    /// Runs when the room's clock fires, with its time (set by the anchor): the mixer's due
    /// ticks, their actions delivered, the talkers reported.
    var onTick: ((ContinuousClock.Instant) -> Void)?
    /// Participants' calls counted on the engine's loop: the room goes when none is left.
    var participants = 0
    /// Paces the talker changes the mixer reports before they go to the engine (room loop).
    var talkerPacer = TalkerReportPacer<String>()
    /// The room's one timer, at the mixer's next tick; nil while nobody is joined (the
    /// mixer has no deadline) and after `closeClock`.
    private(set) var clock: (id: TimerID, at: ContinuousClock.Instant)?
    /// Times the room's clock fired (each runs the ticks then due), for tests and figures.
    private(set) var clockWakeUps: UInt64 = 0
    /// Set by `closeClock`: the room is gone and its clock is never armed again.
    private(set) var isClosed = false

    init(key: RoomKey, loop: any MediaLoop, configuration: ConferenceMixer<String>.Configuration) throws(CodecError) {
        self.key = key
        self.loop = loop
        mixer = try ConferenceMixer<String>(configuration: configuration)
    }

    /// Keeps the room's one timer at the mixer's `nextTopologyDeadline` (room loop): after
    /// any call into the mixer, which may start its clock (a first join), move it (a tick)
    /// or stop it (the last leg left). Costs one comparison when nothing moved.
    func rescheduleClock() {
        let next = isClosed ? nil : mixer.nextTopologyDeadline
        if let timer = clock {
            if timer.at == next { return }
            loop.cancel(timer.id)
            clock = nil
        }
        guard let next else { return }
        let id = loop.schedule(at: next) { [weak self] in
            guard let self else { return }
            self.clock = nil
            guard !self.isClosed else { return }
            self.clockWakeUps &+= 1
            self.onTick?(self.loop.now)
            self.rescheduleClock()
        }
        clock = (id, next)
    }

    /// Stops the room's clock for good (room loop): the room closed.
    func closeClock() {
        isClosed = true
        if let timer = clock { loop.cancel(timer.id) }
        clock = nil
        onTick = nil
        deliver = nil
    }

    /// The actions of a tick, handed to each participant's call through `deliver`. The
    /// mixer emits each leg's actions together, so they go in runs, one hand-over per
    /// participant, with no regrouping.
    func distribute(_ actions: [MediaTopologyAction<String>]) {
        guard let deliver, !actions.isEmpty else { return }
        var leg: String?
        var run: [MediaTopologyAction<CallLegID>] = []
        for action in actions {
            let (owner, converted) = Self.caller(action)
            if owner != leg {
                if let leg, !run.isEmpty { deliver(leg, run) }
                leg = owner
                run.removeAll(keepingCapacity: true)
            }
            run.append(converted)
        }
        if let leg, !run.isEmpty { deliver(leg, run) }
    }

    /// The actions of a call into the mixer: the seat's own become its `.caller` leg's,
    /// the others go to their calls through `deliver`.
    func split(_ actions: [MediaTopologyAction<String>], for callID: String) -> [MediaTopologyAction<CallLegID>] {
        guard !actions.isEmpty else { return [] }
        var own: [MediaTopologyAction<CallLegID>] = []
        var others: [String: [MediaTopologyAction<CallLegID>]] = [:]
        for action in actions {
            let (leg, converted) = Self.caller(action)
            if leg == callID { own.append(converted) } else { others[leg, default: []].append(converted) }
        }
        for (leg, actions) in others { deliver?(leg, actions) }
        return own
    }

    /// The action with its leg named `.caller`, and the call id it was for.
    private static func caller(_ action: MediaTopologyAction<String>) -> (String, MediaTopologyAction<CallLegID>) {
        switch action {
        case .send(let leg, let bytes, let from, let to): (leg, .send(leg: .caller, bytes: bytes, from: from, to: to))
        case .stateChanged(let leg, let state): (leg, .stateChanged(leg: .caller, state))
        case .receivedTelephoneEvent(let leg, let event, let timestamp): (leg, .receivedTelephoneEvent(leg: .caller, event, timestamp: timestamp))
        case .receivedMedia(let leg): (leg, .receivedMedia(leg: .caller))
        case .forwarded(let from, _): (from, .forwarded(from: .caller, to: .caller))
        case .dropped(let leg, let reason, let from, let detail): (leg, .dropped(leg: .caller, reason, from: from, detail: detail))
        }
    }
}

/// A conference room's identity on this server: the application and its conference id.
struct RoomKey: Hashable, Sendable, CustomStringConvertible {
    var applicationKey: String
    var room: String
    var description: String { "\(applicationKey)/\(room)" }
}

/// A participant's view of its room: a `MediaTopology` with one leg, `.caller`, which is
/// the room mixer's leg named by the call's id. A seat has no clock of its own (no
/// `nextTopologyDeadline`): the room's one timer (`RoomMedia.rescheduleClock`) runs the
/// mixer's ticks for every seat. Its leg keeps its own deadlines (ICE, DTLS, RTCP).
final class RoomSeat: MediaTopology {
    let room: RoomMedia
    let callID: String

    init(room: RoomMedia, callID: String) {
        self.room = room
        self.callID = callID
    }

    private func seat(_ leg: CallLegID) -> String? { leg == .caller ? callID : nil }

    func mediaMode(for leg: CallLegID) -> MediaLegMode { .decode }

    func add(_ leg: CallLegID, core: consuming MediaLegCore) {
        guard let id = seat(leg) else { return }
        room.mixer.add(id, core: core)
    }

    func remove(_ leg: CallLegID, now: ContinuousClock.Instant) -> (actions: [MediaTopologyAction<CallLegID>], statistics: MediaLegStatistics)? {
        guard let id = seat(leg), let removed = room.mixer.remove(id, now: now) else { return nil }
        return (room.split(removed.actions, for: callID), removed.statistics)
    }

    func join(_ leg: CallLegID) throws(MediaTopologyError) {
        guard let id = seat(leg) else { throw MediaTopologyError(.unknownLeg, "a room call has only its caller's leg") }
        try room.mixer.join(id)
    }

    var legIDs: [CallLegID] { room.mixer.legIDs.contains(callID) ? [.caller] : [] }

    func withLeg<Result, Failure: Error>(_ leg: CallLegID, _ body: (inout MediaLegCore) throws(Failure) -> Result) throws(Failure) -> Result? {
        guard let id = seat(leg) else { return nil }
        return try room.mixer.withLeg(id, body)
    }

    func start(_ leg: CallLegID, now: ContinuousClock.Instant) throws(MediaLegError) -> [MediaTopologyAction<CallLegID>] {
        guard let id = seat(leg) else { throw MediaLegError(.state, "a room call has only its caller's leg") }
        return room.split(try room.mixer.start(id, now: now), for: callID)
    }

    func receive(_ datagram: [UInt8], from source: ICETransportAddress, on leg: CallLegID, local: ICETransportAddress,
                 now: ContinuousClock.Instant) -> [MediaTopologyAction<CallLegID>] {
        guard let id = seat(leg) else { return [] }
        return room.split(room.mixer.receive(datagram, from: source, on: id, local: local, now: now), for: callID)
    }

    func handleTimeout(of leg: CallLegID, now: ContinuousClock.Instant) -> [MediaTopologyAction<CallLegID>] {
        guard let id = seat(leg) else { return [] }
        return room.split(room.mixer.handleTimeout(of: id, now: now), for: callID)
    }

    func nextDeadline(of leg: CallLegID) -> ContinuousClock.Instant? {
        seat(leg).flatMap { room.mixer.nextDeadline(of: $0) }
    }
}
