/// Why a call ended: exactly the end causes of the documented SDK.
///
/// A call in progress has no end cause; `call.ended` always carries one, and so does every
/// ended record. The signaling protocol spells it `SignalingMessage.EndCause`. A new cause
/// would need a new protocol version, so clients may switch over this exhaustively.
public enum CallEndCause: String, Sendable, Hashable, CaseIterable, Codable {
    /// A callee device rang but nobody answered in time (60 s by default), or the call
    /// reached its maximum length (4 h by default).
    case timeout
    /// The callee declined (`call.decline`, or `call.hangup` before answering).
    case denied
    /// No callee device acknowledged the call (neither `call.ack` nor `push.relay`) in time.
    case noAnswer
    /// The call failed; `call.ended` carries the error.
    case error
    /// A party hung up after the call was answered.
    case hungUp
    /// The caller hung up before the call was answered.
    case canceled
    /// Another device of the callee answered.
    case otherDeviceAnswered
    /// No media or ICE consent from a party for too long (30 s by default), or its
    /// connection dropped and did not come back in that time.
    case inactive
}
