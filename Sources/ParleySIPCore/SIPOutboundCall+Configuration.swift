extension SIPOutboundCall {
    /// How the call behaves; the same for every call of a trunk.
    public struct Configuration: Sendable, Hashable {
        /// How a session refresh of ours is sent (RFC 4028 §7.4).
        public enum RefreshMethod: String, Sendable, Hashable {
            /// UPDATE when the far side's 2xx listed it in Allow, else re-INVITE.
            case automatic
            /// Always UPDATE (RFC 3311), without a body.
            case update
            /// Always re-INVITE, with our last SDP unchanged.
            case reInvite
        }

        /// The transaction timers.
        public var timers: SIPTimers
        /// The session interval asked for in the INVITE's Session-Expires (RFC 4028 §7.1),
        /// 1800 s by default; nil asks for none (a far side that asks is still followed).
        public var sessionInterval: UInt32?
        /// The smallest interval accepted (Min-SE, RFC 4028 §5: at least 90 s); a refresh
        /// from the far side asking for less is answered 422.
        public var minimumSessionInterval: UInt32
        /// How our refreshes are sent.
        public var refreshMethod: RefreshMethod
        /// The User-Agent header, if any.
        public var userAgent: String?
        /// The most 401/407 challenges answered for one request (the digest client also
        /// stops at a second challenge of a realm it answered, unless stale).
        public var maxChallenges: Int

        /// The defaults: RFC 3261's timers, 1800 s sessions, Min-SE 90 s, refresh by
        /// UPDATE when allowed, User-Agent `Parley`, three challenges.
        public init(
            timers: SIPTimers = SIPTimers(), sessionInterval: UInt32? = 1800, minimumSessionInterval: UInt32 = 90,
            refreshMethod: RefreshMethod = .automatic, userAgent: String? = "Parley", maxChallenges: Int = 3
        ) {
            self.timers = timers
            let minimum = max(90, minimumSessionInterval)
            self.minimumSessionInterval = minimum
            self.sessionInterval = sessionInterval.map { max($0, minimum) }
            self.refreshMethod = refreshMethod
            self.userAgent = userAgent
            self.maxChallenges = max(0, maxChallenges)
        }
    }
}
