public import ParleySIP

extension SIPInboundCall {
    /// How the call behaves; the same for every inbound call of a listener.
    public struct Configuration: Sendable, Hashable {
        /// The transaction timers.
        public var timers: SIPTimers
        /// The session interval our 200 asks for when the INVITE named none (RFC 4028 §9),
        /// 1800 s by default; nil asks for none (an INVITE that asks is still followed).
        public var sessionInterval: UInt32?
        /// The smallest interval accepted (Min-SE, RFC 4028 §5: at least 90 s); an INVITE
        /// or refresh asking for less is answered 422.
        public var minimumSessionInterval: UInt32
        /// How our refreshes are sent.
        public var refreshMethod: SIPOutboundCall.Configuration.RefreshMethod
        /// The User-Agent of our requests and Server of our responses, if any.
        public var userAgent: String?

        /// The defaults: RFC 3261's timers, 1800 s sessions, Min-SE 90 s, refresh by
        /// UPDATE when the far side allows it, `Parley`.
        public init(
            timers: SIPTimers = SIPTimers(), sessionInterval: UInt32? = 1800, minimumSessionInterval: UInt32 = 90,
            refreshMethod: SIPOutboundCall.Configuration.RefreshMethod = .automatic, userAgent: String? = "Parley"
        ) {
            self.timers = timers
            let minimum = max(90, minimumSessionInterval)
            self.minimumSessionInterval = minimum
            self.sessionInterval = sessionInterval.map { max($0, minimum) }
            self.refreshMethod = refreshMethod
            self.userAgent = userAgent
        }
    }

    /// Who we are on this call: what our responses and requests say about us.
    public struct Local: Sendable, Hashable {
        /// Our Contact in the 18x and 200 and in target refreshes: where the far side sends
        /// its requests in the dialog.
        public var contact: SIPNameAddress
        /// Our Via sent-by in requests of the dialog.
        public var viaHost: SIPHost
        /// Our Via port (omitted when nil: the transport's default).
        public var viaPort: UInt16?

        /// Our side of a call.
        public init(contact: SIPNameAddress, viaHost: SIPHost, viaPort: UInt16? = nil) {
            self.contact = contact
            self.viaHost = viaHost
            self.viaPort = viaPort
        }
    }
}
