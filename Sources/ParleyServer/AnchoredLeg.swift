import ParleyCalling
import ParleyICE
import ParleyMediaLeg
import ParleyNetLinux

/// One relay-mode leg of the media anchor: its core, its own UDP socket (a port of the
/// pool, returned when the socket closes) and its timer. A class, because a
/// `MediaLegCore` cannot be copied into a collection. Used on the anchor's loop only.
final class AnchoredLeg: @unchecked Sendable {
    // @unchecked: owned by the MediaAnchor and touched on its loop's thread only.
    let callID: String
    let leg: CallLegID
    var core: MediaLegCore
    let socket: UDPSocket
    /// Our host candidate as the core announces it (the announced address, the socket's port).
    let localICE: ICETransportAddress
    var timer: (id: TimerID, at: ContinuousClock.Instant)?
    /// Last datagram from the device, for the inactivity check.
    var lastReceived: ContinuousClock.Instant
    var started = false
    var registered = false
    /// The application whose quota of legs this leg counts against, until it is shut.
    var countedApplication: String?
    /// So each report is given to the engine at most once.
    var reportedConnected = false
    var reportedEnd = false

    init(callID: String, leg: CallLegID, core: consuming MediaLegCore, socket: UDPSocket,
         localICE: ICETransportAddress, now: ContinuousClock.Instant) {
        self.callID = callID
        self.leg = leg
        self.core = core
        self.socket = socket
        self.localICE = localICE
        self.lastReceived = now
    }
}
