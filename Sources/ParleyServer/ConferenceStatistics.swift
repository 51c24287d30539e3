/// The conference rooms of a server at one moment, for `/metrics`: read from each room's
/// mixer on its loop when scraped, so the mixing itself pays nothing for it.
public struct ConferenceStatistics: Sendable, Hashable {
    /// Rooms with a mixer now (lingering empty ones included).
    public var rooms = 0
    /// Participants' legs in the rooms' mixers.
    public var participants = 0
    /// Participants the mixers count as talking.
    public var talkers = 0
    /// The worst room's 99th percentile of tick lateness over its recent ticks (how long
    /// after its 20 ms deadline a tick ran).
    public var tickLatenessP99: Duration = .zero
    /// The worst lateness of any tick of a room open now.
    public var tickLatenessMaximum: Duration = .zero

    public init() {}
}
