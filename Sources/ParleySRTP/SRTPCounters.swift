/// What one `SRTPSession` has done so far. A value: read it, compare it, print it as JSON.
///
/// Every call to protect or unprotect (RTP or RTCP) adds exactly one to exactly one counter.
public struct SRTPCounters: Sendable, Hashable, Codable {
    /// Packets protected successfully (`protect` and `protectRTCP`).
    public var protected: UInt64 = 0
    /// Packets that authenticated and were decrypted (`unprotect` and `unprotectRTCP`).
    public var unprotected: UInt64 = 0
    /// Packets dropped because their authentication tag did not verify.
    public var authFailures: UInt64 = 0
    /// Packets dropped by the replay check: already seen, or older than the window.
    public var replays: UInt64 = 0
    /// Packets dropped for any other reason: truncated, malformed header, no room, wrong direction.
    public var otherFailures: UInt64 = 0

    /// Counters with the given values (all zero by default).
    public init(protected: UInt64 = 0, unprotected: UInt64 = 0, authFailures: UInt64 = 0, replays: UInt64 = 0, otherFailures: UInt64 = 0) {
        self.protected = protected
        self.unprotected = unprotected
        self.authFailures = authFailures
        self.replays = replays
        self.otherFailures = otherFailures
    }

    /// Total packets dropped.
    public var dropped: UInt64 { authFailures &+ replays &+ otherFailures }
}
