import Foundation

/// What the session core knows about one call: the facts the public `ParleyCall` shows,
/// and the flags that keep each request and event at most once.
struct ClientCallRecord: Sendable, Hashable {
    let callID: String
    let direction: ParleyCallDirection
    let remoteUserID: String
    let headers: [String: String]
    var state: ParleyCallState = .initiating
    var details = ParleyCallDetails()
    /// Incoming: the server's SDP offer, answered by the leg on `answer()`.
    var offer: String?
    /// Outgoing: `call.start` was queued or sent, so the server may know the call.
    var startSent = false
    /// Outgoing: the server's `call.media` answer was handed to the leg.
    var mediaApplied = false
    /// Incoming: the user answered (the leg is answering or has answered the offer).
    var answerRequested = false
    var hangupRequested = false
    /// It ended by this device's doing: its hangup (cancel, decline, hang up) or
    /// `terminate`, not the other party, another device or the server.
    var endedByThisDevice = false
    /// The server knows this call (incoming always; outgoing once `call.start` was sent).
    var serverKnows: Bool { direction == .incoming || startSent }
}
