public import ParleyCallCore

/// The port through which the call engine reaches the SIP callees of calls to phone
/// numbers and SIP addresses (`Party.sip`). Its adapter is issue 10's SIP user agent (not
/// built yet): it renders a SIP party's notifications as SIP (`offered` as the INVITE with
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
}
