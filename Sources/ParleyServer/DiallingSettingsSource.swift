/// Where the call engine gets each application's dialling settings (docs/calls.md,
/// "Dialling policy"): the store's `Application.dialling`, all of them read at start and
/// again every `refreshInterval`, and an application's own whenever a `hello` reads it.
/// With a source in `ServerComponents.diallingSettings` the engine checks every call to a
/// phone number or SIP address against its application's settings; parleyd always gives
/// one (`DaemonComposition`).
///
/// Why a periodic reread rather than a read per call: the engine's loop never waits on
/// the store, and `parleyd app set-dialling` changes the file from another process, which
/// tells the server nothing; rereading a few columns of the applications every few
/// seconds is cheap, and the same on a database shared by several nodes.
public struct DiallingSettingsSource: Sendable, Hashable {
    /// How stale a change made outside the server may be before calls follow it.
    public var refreshInterval: Duration

    public init(refreshInterval: Duration = .seconds(5)) {
        self.refreshInterval = refreshInterval
    }

    /// The store's settings, reread every 5 seconds.
    public static let store = DiallingSettingsSource()
}
