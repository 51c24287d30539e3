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

    /// The legs of conference callouts in the mixer, by mixer name (room loop): a callout's
    /// leg is its callee's, not `.caller` (`RoomLegName`).
    var calloutLegs: [String: CallLegID] = [:]

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
    /// participant (per leg of a callout ringing several devices), with no regrouping.
    func distribute(_ actions: [MediaTopologyAction<String>]) {
        guard let deliver, !actions.isEmpty else { return }
        var leg: String?
        var run: [MediaTopologyAction<CallLegID>] = []
        for action in actions {
            let (owner, converted) = convert(action)
            if owner != leg {
                if let leg, !run.isEmpty { deliver(leg, run) }
                leg = owner
                run.removeAll(keepingCapacity: true)
            }
            run.append(converted)
        }
        if let leg, !run.isEmpty { deliver(leg, run) }
    }

    /// The actions of a call into the mixer: the seat's own go back to it with their legs'
    /// call names, the others go to their calls through `deliver`.
    func split(_ actions: [MediaTopologyAction<String>], for callID: String) -> [MediaTopologyAction<CallLegID>] {
        guard !actions.isEmpty else { return [] }
        // A participant's datagram comes back with actions for its own call only: converted
        // in one pass, with no regrouping.
        if calloutLegs.isEmpty, actions.allSatisfy({ Self.legName(of: $0) == callID }) {
            return actions.map { convert($0).1 }
        }
        var own: [MediaTopologyAction<CallLegID>] = []
        var others: [String: [MediaTopologyAction<CallLegID>]] = [:]
        for action in actions {
            let (call, converted) = convert(action)
            if call == callID { own.append(converted) } else { others[call, default: []].append(converted) }
        }
        for (call, actions) in others { deliver?(call, actions) }
        return own
    }

    /// The leg a mixer name stands for in its call, and that call's id.
    func leg(named name: String) -> (callID: String, leg: CallLegID) {
        // Every send of every tick comes here: a room without callouts names legs by call id.
        guard !calloutLegs.isEmpty else { return (name, .caller) }
        return (RoomLegName.callID(of: name), calloutLegs[name] ?? .caller)
    }

    /// The mixer name of the leg of call `callID` that is in the mix: its caller's for a call
    /// to the room, its answering callee's for a callout; nil when the mixer has none.
    func mixedLeg(of callID: String) -> String? {
        if mixer.legIDs.contains(callID) { return callID }
        return mixer.legIDs.first { RoomLegName.callID(of: $0) == callID }
    }

    /// The mixer name of the leg an action is for.
    private static func legName(of action: MediaTopologyAction<String>) -> String {
        switch action {
        case .send(let name, _, _, _), .stateChanged(let name, _), .receivedTelephoneEvent(let name, _, _),
             .receivedMedia(let name), .dropped(let name, _, _, _):
            name
        case .forwarded(let from, _):
            from
        }
    }

    /// The action with its leg named as its call names it, and the call id it was for.
    private func convert(_ action: MediaTopologyAction<String>) -> (String, MediaTopologyAction<CallLegID>) {
        switch action {
        case .send(let name, let bytes, let from, let to):
            let (call, leg) = leg(named: name)
            return (call, .send(leg: leg, bytes: bytes, from: from, to: to))
        case .stateChanged(let name, let state):
            let (call, leg) = leg(named: name)
            return (call, .stateChanged(leg: leg, state))
        case .receivedTelephoneEvent(let name, let event, let timestamp):
            let (call, leg) = leg(named: name)
            return (call, .receivedTelephoneEvent(leg: leg, event, timestamp: timestamp))
        case .receivedMedia(let name):
            let (call, leg) = leg(named: name)
            return (call, .receivedMedia(leg: leg))
        case .forwarded(let from, _):
            let (call, leg) = leg(named: from)
            return (call, .forwarded(from: leg, to: leg))
        case .dropped(let name, let reason, let from, let detail):
            let (call, leg) = leg(named: name)
            return (call, .dropped(leg: leg, reason, from: from, detail: detail))
        }
    }
}

/// How the room's mixer names legs: a participant who called the room by its call's id; a
/// leg a conference callout offered its callee by the call's id, `/` and the leg's name
/// (a callout may ring several devices of its user, each with a leg, until one answers).
/// Call ids are UUIDs, so the call id is what comes before the first `/`.
enum RoomLegName {
    static func name(of leg: CallLegID, in callID: String) -> String {
        leg == .caller ? callID : "\(callID)/\(leg)"
    }

    static func callID(of name: String) -> String {
        name.firstIndex(of: "/").map { String(name[..<$0]) } ?? name
    }
}

/// A conference room's identity on this server: the application and its conference id.
struct RoomKey: Hashable, Sendable, CustomStringConvertible {
    var applicationKey: String
    var room: String
    var description: String { "\(applicationKey)/\(room)" }
}

/// A participant's view of its room: a `MediaTopology` whose legs are the room mixer's:
/// `.caller` for a call to the room, named by the call's id; the callee legs of a
/// conference callout, named as `RoomLegName` says. A seat has no clock of its own (no
/// `nextTopologyDeadline`): the room's one timer (`RoomMedia.rescheduleClock`) runs the
/// mixer's ticks for every seat. Its legs keep their own deadlines (ICE, DTLS, RTCP).
final class RoomSeat: MediaTopology {
    let room: RoomMedia
    let callID: String

    init(room: RoomMedia, callID: String) {
        self.room = room
        self.callID = callID
    }

    private func seat(_ leg: CallLegID) -> String? {
        if case .callee(.room) = leg { return nil }  // the room itself has no leg
        return RoomLegName.name(of: leg, in: callID)
    }

    func mediaMode(for leg: CallLegID) -> MediaLegMode { .decode }

    func add(_ leg: CallLegID, core: consuming MediaLegCore) {
        guard let id = seat(leg) else { return }
        if leg != .caller { room.calloutLegs[id] = leg }
        room.mixer.add(id, core: core)
    }

    func remove(_ leg: CallLegID, now: ContinuousClock.Instant) -> (actions: [MediaTopologyAction<CallLegID>], statistics: MediaLegStatistics)? {
        guard let id = seat(leg), let removed = room.mixer.remove(id, now: now) else { return nil }
        let actions = room.split(removed.actions, for: callID)
        room.calloutLegs[id] = nil
        return (actions, removed.statistics)
    }

    func join(_ leg: CallLegID) throws(MediaTopologyError) {
        guard let id = seat(leg) else { throw MediaTopologyError(.unknownLeg, "a room has no leg of its own") }
        try room.mixer.join(id)
    }

    var legIDs: [CallLegID] {
        room.mixer.legIDs.compactMap { name in RoomLegName.callID(of: name) == callID ? room.leg(named: name).leg : nil }
    }

    func withLeg<Result, Failure: Error>(_ leg: CallLegID, _ body: (inout MediaLegCore) throws(Failure) -> Result) throws(Failure) -> Result? {
        guard let id = seat(leg) else { return nil }
        return try room.mixer.withLeg(id, body)
    }

    func start(_ leg: CallLegID, now: ContinuousClock.Instant) throws(MediaLegError) -> [MediaTopologyAction<CallLegID>] {
        guard let id = seat(leg) else { throw MediaLegError(.state, "a room has no leg of its own") }
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
