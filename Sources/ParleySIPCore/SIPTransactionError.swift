/// A request of the transaction user the transaction layer cannot carry out. Nothing was
/// sent and no state changed when it is thrown.
public struct SIPTransactionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The category of a problem.
    public enum Kind: String, Sendable, Hashable {
        /// The request has no top Via with an RFC 3261 branch, no CSeq, or is an ACK (an
        /// ACK for a 2xx is sent without a transaction; the one for a 3xx-6xx is the
        /// transaction's own); or the response is not a response.
        case unsuitableMessage
        /// A client transaction with that branch and method exists already.
        case duplicateTransaction
        /// No live server transaction has that id.
        case unknownTransaction
        /// The transaction cannot send that response now: a final response was sent
        /// already (only an INVITE's 2xx may be sent again), or the response's CSeq is not
        /// the request's.
        case invalidState
        /// The layer holds `SIPTransactionLayer.Configuration.maxTransactions` already.
        case tooManyTransactions
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
