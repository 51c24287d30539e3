/// Why a dialog could not be made, could not take a request, or could not build one.
public struct SIPDialogError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The category of a problem.
    public enum Kind: String, Sendable, Hashable {
        /// The message cannot make a dialog: not a 101-299 response to a request that
        /// makes dialogs, no From or To tag (§12.1), or a header needed is malformed.
        case cannotCreate
        /// The request belongs to another dialog, or to none (answer 481, §12.2.2).
        case notInDialog
        /// The request's CSeq is below the remote sequence number (answer 500, §12.2.2).
        case outOfOrder
        /// The local CSeq cannot grow past 2^32 - 1.
        case sequenceExhausted
        /// A value given to a builder cannot be written (a header that is not a token,
        /// a value with a line break).
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

    /// The status to answer a request with when `receive(request:)` refused it.
    public var statusCode: Int? {
        switch kind {
        case .notInDialog: 481
        case .outOfOrder: 500
        case .cannotCreate: 400
        case .sequenceExhausted, .invalidArgument: nil
        }
    }

    public var description: String { "\(kind.rawValue): \(detail)" }
}
