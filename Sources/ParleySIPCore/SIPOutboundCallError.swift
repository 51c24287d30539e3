/// A request to `SIPOutboundCall` it cannot carry out; nothing was sent when it is thrown.
public struct SIPOutboundCallError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The category of a problem.
    public enum Kind: String, Sendable, Hashable {
        /// The invitation cannot be written: a header the call writes itself given in
        /// `headers`, a Call-ID that is not `word[@word]`, a bad tag or value.
        case invalidInvitation
        /// `answerRemoteOffer` or `rejectRemoteOffer` without a re-INVITE or UPDATE waiting.
        case noPendingOffer
        /// A status that cannot answer an offer (only 300-699 rejects one).
        case invalidStatus
        /// `offer` before the answer or after the call ended.
        case invalidState
        /// `offer` without SDP.
        case invalidSDP
        /// `offer` while an offer (ours or the far side's) is not answered yet.
        case offerPending
    }

    /// What went wrong.
    public let kind: Kind
    /// The specifics, for logs.
    public let detail: String

    init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String { "\(kind.rawValue): \(detail)" }
}
