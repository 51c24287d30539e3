import ParleyCallCore
import ParleyICECore
import ParleyMediaLegCore
import ParleyNetCore
import ParleyNetLinux

/// What the media anchor keeps for one leg of a call: its own UDP socket (a port of the
/// pool, returned when the socket closes), its timer and what was reported. The leg's core
/// lives in the call's `MediaTopology`. Used on the anchor's loop only.
final class AnchoredLeg: @unchecked Sendable {
    // @unchecked: owned by the MediaAnchor and touched on its loop's thread only.
    let callID: String
    let leg: CallLegID
    let socket: any MediaSocket
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

    /// Datagrams that arrived before the leg started (a device's first checks can overtake
    /// its SDP answer), handed to the core when it starts. At most `maxEarlyDatagrams`;
    /// later ones are dropped, as the core would drop them.
    private var early: [(bytes: [UInt8], from: ICETransportAddress)] = []
    static let maxEarlyDatagrams = 4
    static let maxEarlyDatagramSize = 1500

    func keepEarly(_ payload: UnsafeRawBufferPointer, from: ICETransportAddress) {
        guard early.count < Self.maxEarlyDatagrams, payload.count <= Self.maxEarlyDatagramSize else { return }
        early.append((Array(payload), from))
    }

    func takeEarly() -> [(bytes: [UInt8], from: ICETransportAddress)] {
        defer { early = [] }
        return early
    }

    /// The socket address of the last ICE destination sent to, so each packet does not
    /// build it again.
    private var lastDestination: (ice: ICETransportAddress, socket: SocketAddress)?

    /// The socket address for an ICE transport address (the one before, most of the time).
    func destination(_ to: ICETransportAddress) -> SocketAddress? {
        if let last = lastDestination, last.ice == to { return last.socket }
        guard let address = SocketAddress(hostBytes: to.ip.bytes, port: to.port) else { return nil }
        lastDestination = (to, address)
        return address
    }

    init(callID: String, leg: CallLegID, socket: any MediaSocket,
         localICE: ICETransportAddress, now: ContinuousClock.Instant) {
        self.callID = callID
        self.leg = leg
        self.socket = socket
        self.localICE = localICE
        self.lastReceived = now
    }
}
