import Foundation
import ParleySignaling

/// What the session core knows about one call: the facts the public `ParleyCall` shows,
/// and the flags that keep each request and event at most once.
struct ClientCallRecord: Sendable, Hashable {
    let callID: String
    let direction: ParleyCallDirection
    /// The other party's user id, phone number or SIP address (`remoteKind` says which).
    let remoteUserID: String
    let headers: [String: String]
    var remoteKind: ParleyCallRemoteKind = .user
    /// Outgoing to a phone number: the caller id sent in `call.start` (the client's `cli`).
    var cli: String?
    /// The far side's `x-` headers from `call.ringing` and `call.answered`, the answer's
    /// value winning for a name in both.
    var responseHeaders: [String: String] = [:]
    /// Incoming: the name the caller asked to be shown as (`call.incoming`'s `displayName`).
    var remoteDisplayName: String?
    /// Outgoing: the name this caller asked the callee's devices to show (`call.start`).
    var callerDisplayName: String?
    var state: ParleyCallState = .initiating
    /// A conference call: the room's talkers as the last `call.talking` named them.
    var talkers: [ParleyConferenceTalker] = []
    var details = ParleyCallDetails()
    /// Incoming: the server's SDP offer, answered by the leg on `answer()`.
    var offer: String?
    /// Outgoing: `call.start` was queued or sent, so the server may know the call.
    var startSent = false
    /// Outgoing: the server's `call.media` answer was handed to the leg.
    var mediaApplied = false
    /// Incoming: where the leg that connects while the call rings is.
    var earlyMedia: EarlyMedia = .unavailable
    /// Incoming: the user answered (the leg is answering or has answered the offer).
    var answerRequested = false
    var hangupRequested = false
    /// This device holds the call: the server accepted its last `call.hold` with `held` true.
    var isHeld = false
    /// The other party holds the call, as its last `call.held` said.
    var isRemoteHeld = false
    /// It ended by this device's doing: its hangup (cancel, decline, hang up) or
    /// `terminate`, not the other party, another device or the server.
    var endedByThisDevice = false
    /// The server knows this call (incoming always; outgoing once `call.start` was sent).
    var serverKnows: Bool { direction == .incoming || startSent }

    /// The other party as the protocol names it.
    var remoteAddress: SignalingMessage.Address {
        switch remoteKind {
        case .user: .user(remoteUserID)
        case .phone: .phone(remoteUserID)
        case .sip: .sip(remoteUserID)
        case .conference: .conference(remoteUserID)
        }
    }

    /// An incoming call's leg made at `call.incoming`, answering the offer at once so
    /// that ICE and DTLS are done before the user answers (`call.ack` carries its SDP).
    enum EarlyMedia: Sendable, Hashable {
        /// None: an outgoing call, or the leg could not be made (the answer makes one).
        case unavailable
        /// The shell is making the leg and its answer; the acknowledgement waits for it.
        case preparing
        /// The leg answered and is connecting or connected, without audio until the answer.
        case prepared
    }
}
