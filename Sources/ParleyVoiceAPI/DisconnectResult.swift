/// How a call ended, seen from the caller: the `result` of DiCE.
public enum DisconnectResult: String, Sendable, Hashable, CaseIterable {
    /// The callee answered.
    case answered = "ANSWERED"
    /// The callee was busy.
    case busy = "BUSY"
    /// The callee did not answer in time.
    case noAnswer = "NOANSWER"
    /// The call could not be set up.
    case failed = "FAILED"
}
