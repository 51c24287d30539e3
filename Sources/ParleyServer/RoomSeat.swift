import ParleyCallCore
import ParleyICECore
import ParleyMediaCore
import ParleyMediaLegCore

/// One conference room's media: its mixer, on one media loop, shared by the calls of its
/// participants (each a call of its own, from an app to the room).
///
/// The mixer names legs by call id. Each participant's call sees the room through a
/// `RoomSeat`, so the media anchor runs a room call as any other: its one leg is `.caller`.
///
/// Threads: created on the engine's loop, then used on `loop`'s thread only (every call of
/// the room is placed on that loop).
final class RoomMedia: @unchecked Sendable {
    /// The application's key and the conference id: rooms never span applications.
    let key: RoomKey
    let loop: any MediaLoop
    let mixer: ConferenceMixer<String>
    /// Performs actions for another participant's leg, in that participant's call (set by
    /// the anchor): the mixer's tick sends to every participant at once.
    var deliver: ((String, [MediaTopologyAction<CallLegID>]) -> Void)?
    /// Participants' calls counted on the engine's loop: the room goes when none is left.
    var participants = 0
    /// Paces the talker changes the mixer reports before they go to the engine (room loop).
    var talkerPacer = TalkerReportPacer<String>()

    init(key: RoomKey, loop: any MediaLoop, configuration: ConferenceMixer<String>.Configuration) throws(CodecError) {
        self.key = key
        self.loop = loop
        mixer = try ConferenceMixer<String>(configuration: configuration)
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
/// the room mixer's leg named by the call's id. Every participant's call runs the room's
/// clock (its topology timer asks `nextTopologyDeadline`): the first to run a due tick
/// runs it for the whole room; the others then find nothing due.
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

    var nextTopologyDeadline: ContinuousClock.Instant? { room.mixer.nextTopologyDeadline }

    func handleTopologyTimeout(now: ContinuousClock.Instant) -> [MediaTopologyAction<CallLegID>] {
        room.split(room.mixer.handleTopologyTimeout(now: now), for: callID)
    }
}
