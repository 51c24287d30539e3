/// Who placed a call.
public enum ParleyCallDirection: String, Sendable, Hashable {
    /// The remote user called this client.
    case incoming
    /// This client called the remote user.
    case outgoing
}
