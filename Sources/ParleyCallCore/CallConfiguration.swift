/// The call timers and limits (server configuration; docs/calls.md).
public struct CallConfiguration: Sendable, Hashable {
    /// From `call.start` until the router's decision (`CallRouter`): then the call ends
    /// with `error` `destination_unavailable`. The local router answers at once.
    public var routingTimeout: Duration = .seconds(10)
    /// From `call.start` until a callee device answers: then the call ends with `noAnswer`
    /// (no device acknowledged it) or `timeout` (a device rang).
    public var ringTimeout: Duration = .seconds(60)
    /// From the answer until both media legs are connected: then the call ends with
    /// `error` `media_failed`.
    public var mediaSetupTimeout: Duration = .seconds(30)
    /// How long a party's dropped connection may stay away (session resume) before its
    /// calls end with `inactive`.
    public var reconnectGrace: Duration = .seconds(30)
    /// The longest call, counted from `call.start`: then it ends with `timeout`.
    public var maximumCallLength: Duration = .seconds(4 * 3600)
    /// Custom headers: names plus values in UTF-8 bytes, at most (protocol: 1024).
    public var maxHeadersBytes: Int = 1024
    /// Custom headers: how many, at most (protocol: 64).
    public var maxHeaderCount: Int = 64
    /// How many ended call ids the registry remembers, so that a late request about one
    /// gets `invalid_state` rather than `call_not_found` and its id cannot be reused.
    public var recentlyEndedCapacity: Int = 4096
    /// How long after a call ended its parties may still send `call.stats` (while the
    /// registry remembers the call, see `recentlyEndedCapacity`).
    public var statsGrace: Duration = .seconds(60)
    /// Calls in progress a user may have started (as caller); a `call.start` beyond it is
    /// refused with `too_many_calls`.
    public var maxCallsPerUser: Int = 10
    /// Calls in progress in one application, at most (beyond: `too_many_calls`).
    public var maxCallsPerApplication: Int = 1000
    /// Whether calls to phone numbers and SIP addresses are placed: a router's `dialNumber`
    /// and `dialSIP` decisions get a SIP party (`Party.sip`). parleyd turns it on when it has
    /// a SIP user agent to reach that party through (ParleyServer's `SIPCallPort`). Off (the
    /// default), those decisions are refused with `not_implemented`, as a kind not built.
    public var sipDialling: Bool = false

    public init() {}
}
