/// A request a topology cannot carry out (a programming or signaling order problem of its
/// owner, reported rather than trapped so a call can end cleanly).
public struct MediaTopologyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of refusal this is.
    public enum Kind: String, Sendable, Hashable {
        /// No leg of that name.
        case unknownLeg
        /// The topology has no room for another joined leg (a relay bridge joins two).
        case full
    }

    public let kind: Kind
    /// One line for the log.
    public let detail: String

    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String { "\(kind.rawValue): \(detail)" }
}
