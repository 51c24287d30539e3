public import ParleySIP

extension SIPOutboundCall {
    /// What the INVITE says and where it goes.
    public struct Invitation: Sendable {
        /// The Request-URI: `sip:+4615550101@trunk.example;user=phone`, `sip:alice@example.test`.
        public var requestURI: SIPURI
        /// From: who calls (the CLI toward a trunk). A tag is drawn when it has none.
        public var from: SIPNameAddress
        /// To: who is called, without a tag.
        public var to: SIPNameAddress
        /// Our Contact: where the far side sends its requests in the dialog.
        public var contact: SIPNameAddress
        /// The SDP offer (Content-Type application/sdp).
        public var offer: [UInt8]
        /// The INVITE's first hop: the trunk or outbound proxy, or the Request-URI's
        /// host resolved. Requests in the dialog go where the dialog says instead.
        public var destination: SIPHop
        /// Our Via sent-by: the address and port responses come back to.
        public var viaHost: SIPHost
        /// Our Via port (omitted when nil: the transport's default).
        public var viaPort: UInt16?
        /// More header fields for the INVITE, in order: `x-` headers, P-Asserted-Identity,
        /// a preloaded Route... Headers the call writes itself (Via, From, To, Call-ID,
        /// CSeq, Contact, Max-Forwards, Content-Type, Content-Length, Allow, Supported,
        /// Session-Expires, Min-SE, Authorization, Proxy-Authorization) are refused.
        public var headers: SIPHeaders
        /// The Call-ID; drawn (128 random bits `@viaHost`) when nil.
        public var callID: String?
        /// The account that answers 401 and 407 challenges, if any.
        public var credentials: SIPDigestClient?

        /// An invitation.
        public init(
            requestURI: SIPURI, from: SIPNameAddress, to: SIPNameAddress, contact: SIPNameAddress, offer: [UInt8],
            destination: SIPHop, viaHost: SIPHost, viaPort: UInt16? = nil, headers: SIPHeaders = SIPHeaders(),
            callID: String? = nil, credentials: SIPDigestClient? = nil
        ) {
            self.requestURI = requestURI
            self.from = from
            self.to = to
            self.contact = contact
            self.offer = offer
            self.destination = destination
            self.viaHost = viaHost
            self.viaPort = viaPort
            self.headers = headers
            self.callID = callID
            self.credentials = credentials
        }
    }
}
