/// What identifies a dialog (RFC 3261 §12): the Call-ID and the two tags, ours first.
public struct SIPDialogID: Sendable, Hashable, CustomStringConvertible {
    /// The Call-ID.
    public let callID: String
    /// Our tag: the From tag of our requests.
    public let localTag: String
    /// The peer's tag: the To tag of our requests (empty for an RFC 2543 peer without one).
    public let remoteTag: String

    /// A dialog id.
    public init(callID: String, localTag: String, remoteTag: String) {
        self.callID = callID
        self.localTag = localTag
        self.remoteTag = remoteTag
    }

    public var description: String { "\(callID);local=\(localTag);remote=\(remoteTag)" }
}
