public import ParleyCallCore
public import ParleyCallModel

/// The port through which the call engine reaches the SIP callees of calls to phone
/// numbers and SIP addresses (`Party.sip`), and the callers of calls that come in over SIP.
/// Its adapter is `SIPUserAgent`: it renders a SIP party's notifications as SIP (`offered` as the INVITE with
/// the anchor's SDP offer, the offer's headers and, for a phone number, the CLI as From
/// and P-Asserted-Identity; `ended` as CANCEL before the answer or BYE after, nothing when
/// the far side ended the call; nothing for `answered` and `established`) and reports the
/// far side's answers back as `SIPCallEvent`s.
///
/// With a port in `ServerComponents.sipCalls` the engine places such calls
/// (`CallConfiguration.sipDialling`); without one they are refused `not_implemented`.
/// The engine calls `tell` on its loop, where the adapter must not block (its transactions,
/// transports and timers run on threads of its own); reports may come from any thread.
public protocol SIPCallPort: AnyObject, Sendable {
    /// Called once by the engine as it starts, before any `tell`: where reports go. The
    /// engine hops each onto its loop and hands it to `CallRegistry.handleSIP`.
    func attach(_ report: @escaping @Sendable (SIPCallEvent, SIPParty) -> Void)
    /// Tell `party` about its call; the notifications of one party arrive in order.
    func tell(_ party: SIPParty, _ notification: CallNotification)
    /// Called once by the engine as it starts: where calls that came in over SIP are
    /// offered. The engine starts each (`CallRegistry.startInbound`), or tells its party
    /// `ended` with the refusal, which the adapter answers with a final failure.
    func attachInbound(_ offered: @escaping @Sendable (InboundSIPCall) -> Void)
}

extension SIPCallPort {
    /// An adapter that takes no calls in.
    public func attachInbound(_ offered: @escaping @Sendable (InboundSIPCall) -> Void) {}
}

/// A call that came in over SIP, as the adapter offers it to the engine: its caller (the
/// far side, named by the number or SIP address it calls from), the number it dialled,
/// the application and the user or room the number's rule names (nil: the application's
/// backend says, answering an ICE), the INVITE's SDP offer and its `x-` headers (as the
/// app may receive them), and the INVITE's Call-ID.
public struct InboundSIPCall: Sendable, Hashable {
    public var party: SIPParty
    /// The number dialled, E.164.
    public var dialled: String
    public var applicationKey: String
    public var target: PartyAddress?
    public var offer: String
    public var headers: [String: String]
    /// The Call-ID of the caller's INVITE (kept in the record of a call the server
    /// answers itself); nil when the adapter does not say.
    public var sipCallID: String?

    public init(party: SIPParty, dialled: String, applicationKey: String, target: PartyAddress?, offer: String, headers: [String: String],
                sipCallID: String? = nil) {
        self.party = party
        self.dialled = dialled
        self.applicationKey = applicationKey
        self.target = target
        self.offer = offer
        self.headers = headers
        self.sipCallID = sipCallID
    }
}
