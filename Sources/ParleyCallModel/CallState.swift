/// Where a call is (docs/calls.md has the transitions).
public enum CallState: String, Sendable, Hashable, Codable, CaseIterable {
    /// `call.start` accepted; the server is setting up the caller's media leg.
    case initiating
    /// The caller got `call.media` and `call.progress`; the callee's devices are being offered the call.
    case progressing
    /// A callee device acknowledged (`call.ack`): the caller got `call.ringing`.
    case ringing
    /// A callee device answered; media legs are connecting.
    case answered
    /// Both media legs are connected: the parties talk.
    case established
    /// Over; the record carries the end cause.
    case ended
}
