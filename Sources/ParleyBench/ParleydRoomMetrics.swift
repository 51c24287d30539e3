/// parleyd's conference figures in one `/metrics` scrape (MetricsRenderer's
/// `parley_conference_*` families): rooms, participants and talkers now, and the worst
/// room's tick lateness over its recent ticks (the mixer keeps its last 1024). Absent
/// families (a parleyd without conference statistics) leave the figure nil.
struct ParleydRoomMetrics: Equatable {
    var rooms: Int?
    var participants: Int?
    var talkers: Int?
    /// Seconds.
    var tickLatenessP99: Double?
    /// Seconds.
    var tickLatenessMaximum: Double?

    init(_ samples: MetricsSamples) {
        let integer = { (name: String) in samples.series[name].flatMap { Int(exactly: $0) } }
        rooms = integer("parley_conference_rooms")
        participants = integer("parley_conference_participants")
        talkers = integer("parley_conference_talkers")
        tickLatenessP99 = samples.series["parley_conference_tick_lateness_p99_seconds"]
        tickLatenessMaximum = samples.series["parley_conference_tick_lateness_max_seconds"]
    }
}
