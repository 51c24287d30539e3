/// Paces the reports of one conference room's talkers: at most one per `interval`, the
/// latest change winning, and none that repeats the last one reported. Sans-I/O: changes
/// and the time come in, the talkers to report now come out. The media anchor asks it once
/// a tick, from the room's clock (`RoomMedia`), so a change waits at most a tick past
/// `interval`.
///
/// The mixer's hysteresis (a 60 ms attack, a 400 ms hangover, an advantage for current
/// talkers) already keeps changes rare; this bounds what a room can send its devices
/// whatever the voices do.
struct TalkerReportPacer<ID: Hashable & Sendable>: Sendable {
    /// The shortest time between two reports.
    let interval: Duration
    /// What was reported last (nobody, before the first report).
    private(set) var reported: [ID] = []
    /// The latest change not reported yet.
    private var pending: [ID]?
    private var lastReport: ContinuousClock.Instant?

    init(interval: Duration = .milliseconds(100)) {
        self.interval = interval
    }

    /// The talkers are now `talkers` (loudest first).
    mutating func note(_ talkers: [ID]) {
        pending = talkers
    }

    /// The talkers to report at `now`, or nil: nothing changed, the last report was less
    /// than `interval` ago (the change waits, and a later one replaces it), or the talkers
    /// came back to what was reported last.
    mutating func due(now: ContinuousClock.Instant) -> [ID]? {
        guard let next = pending else { return nil }
        if let lastReport, now - lastReport < interval { return nil }
        pending = nil
        guard next != reported else { return nil }
        reported = next
        lastReport = now
        return next
    }
}
