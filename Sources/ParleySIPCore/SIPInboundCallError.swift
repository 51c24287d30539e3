/// A request to `SIPInboundCall` it cannot carry out; nothing was sent when it is thrown.
public struct SIPInboundCallError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The category of a problem.
    public enum Kind: String, Sendable, Hashable {
        /// The message given to `init` is not an initial INVITE a call can be made from:
        /// not an INVITE, malformed, with a To tag (it belongs to a dialog), or without
        /// the Call-ID, CSeq or Contact a dialog needs.
        case invalidInvite
        /// The call is not where the request makes sense: `ring` or `answer` after a
        /// final response, `start` twice, `answer` before `start`.
        case invalidState
        /// The SDP cannot be used: empty where an offer or answer is needed, or early
        /// media (an SDP in a 183) for an INVITE without an offer, whose first SDP from us
        /// would be an offer in an unreliable provisional response.
        case invalidSDP
        /// A status that cannot be used: a rejection must be 400-699, a refused offer
        /// 300-699.
        case invalidStatus
        /// `answerRemoteOffer` or `rejectRemoteOffer` without a re-INVITE or UPDATE waiting.
        case noPendingOffer
        /// `offer` while an offer (ours or the far side's) is not answered yet.
        case offerPending
        /// A header value or reason phrase that cannot be written (a line break in it).
        case invalidArgument
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
