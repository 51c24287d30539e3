public import ParleySTUN

/// An IP address and UDP port: where a candidate lives. ICE here is UDP only, so a transport
/// address needs no protocol field; the STUN layer's address type is exactly that.
public typealias ICETransportAddress = STUNTransportAddress

/// The time an agent is told "it is now". Agents never read a clock; the shell passes the
/// same clock's readings to every call.
public typealias ICEInstant = ContinuousClock.Instant

/// An ICE username fragment and password (RFC 8445 §5.3), as exchanged in SDP
/// (`a=ice-ufrag`, `a=ice-pwd`).
public struct ICECredentials: Sendable, Hashable, CustomStringConvertible {
    /// The username fragment.
    public var ufrag: String
    /// The password; the short-term MESSAGE-INTEGRITY key (RFC 8489 §9.1).
    public var password: String

    public init(ufrag: String, password: String) {
        self.ufrag = ufrag
        self.password = password
    }

    var key: STUNIntegrityKey { .shortTerm(password: password) }

    /// Shows the ufrag only, so passwords stay out of logs.
    public var description: String { "ICECredentials(ufrag: \(ufrag))" }
}

/// The overall state of an agent, named as in WebRTC's `RTCIceConnectionState`.
public enum ICEConnectionState: String, Sendable, Hashable, Encodable, CustomStringConvertible {
    /// Created; no check sent or received yet.
    case new
    /// Checks are under way; nothing selected yet.
    case checking
    /// A pair is selected and consent is fresh.
    case connected
    /// A pair is selected but consent has not been refreshed for a while; it may come back.
    case disconnected
    /// Every pair failed, or consent expired (RFC 7675 §5.1). Terminal.
    case failed
    /// Closed by the application. Terminal.
    case closed

    public var description: String { rawValue }
}

/// A local and a remote transport address: where checks and media go from and to.
/// `local` is always the base, the address of the socket to send from.
/// Encodes as `{"local": {"family", "address", "port"}, "remote": {…}}`.
public struct ICECandidatePair: Sendable, Hashable, Encodable, CustomStringConvertible {
    public var local: ICETransportAddress
    public var remote: ICETransportAddress

    public init(local: ICETransportAddress, remote: ICETransportAddress) {
        self.local = local
        self.remote = remote
    }

    public var description: String { "\(local) -> \(remote)" }
}

/// Why an agent ignored a datagram. Reported so the shell can log; never answered.
public enum ICEDropReason: String, Sendable, Hashable, Encodable, CustomStringConvertible {
    /// Not a well-formed STUN message (RFC 8489 §6.3).
    case notSTUN
    /// FINGERPRINT missing or wrong: ICE requires it (RFC 8445 §7.1), and a bad one means
    /// the datagram is not STUN at all (RFC 8489 §7.3).
    case badFingerprint
    /// A STUN method or class this agent does not handle (e.g. an indication, a response
    /// to a lite agent, which never sends requests).
    case unsupportedMessage
    /// A response whose transaction ID matches no check in flight (late, duplicate or forged).
    case unknownTransaction
    /// A response without valid MESSAGE-INTEGRITY under the remote password (RFC 8489 §9.1.4).
    case badResponseIntegrity
    /// The agent is closed or failed.
    case inactive
    /// An authenticated check whose transaction ID already came from another address: a
    /// captured check sent again, not a new nomination or consent (a retransmission comes
    /// from the same address and is answered).
    case replayedTransaction

    public var description: String { rawValue }
}

/// What an agent asks its shell to do, in order.
public enum ICEAction: Sendable, Hashable {
    /// Send `bytes` as one UDP datagram from the socket bound to `from` to `to`.
    case send(bytes: [UInt8], from: ICETransportAddress, to: ICETransportAddress)
    /// The connection state changed to this value.
    case stateChanged(ICEConnectionState)
    /// Media should now flow over this pair (RFC 8445 §8.1.1: the nominated pair).
    case selectedPairChanged(ICECandidatePair)
    /// A datagram was ignored, for this reason; for logs and tests.
    case dropped(ICEDropReason, from: ICETransportAddress)
}

/// A candidate's type and its RFC 8445 §5.1.2.2 recommended type preference.
public enum ICECandidateType: String, Sendable, Hashable, Encodable, CustomStringConvertible {
    case host
    case peerReflexive = "prflx"
    case serverReflexive = "srflx"
    case relay

    /// RFC 8445 §5.1.2.2: host 126, peer-reflexive 110, server-reflexive 100, relayed 0.
    public var typePreference: UInt32 {
        switch self {
        case .host: return 126
        case .peerReflexive: return 110
        case .serverReflexive: return 100
        case .relay: return 0
        }
    }

    public var description: String { rawValue }
}

/// Candidate and pair priorities.
public enum ICEPriority {
    /// RFC 8445 §5.1.2.1:
    /// `priority = 2^24 * typePreference + 2^8 * localPreference + (256 - componentID)`.
    /// `localPreference` is 0...65535; `componentID` 1...256 (1 is RTP).
    public static func candidate(type: ICECandidateType, localPreference: UInt16, componentID: UInt8 = 1) -> UInt32 {
        let component = UInt32(max(componentID, 1))
        return type.typePreference << 24 | UInt32(localPreference) << 8 | (256 - component)
    }

    /// Local preference for the `index`-th host address of its family: IPv6 above IPv4
    /// (RFC 8421 §4 prefers IPv6 when both work), earlier addresses above later ones.
    public static func localPreference(for address: ICETransportAddress, index: Int) -> UInt16 {
        let base: Int
        switch address.ip {
        case .ipv6: base = 65535
        case .ipv4: base = 32767
        }
        return UInt16(clamping: base - min(max(index, 0), 30000))
    }

    /// RFC 8445 §6.1.2.3, with G the controlling and D the controlled agent's candidate
    /// priority: `2^32 * min(G, D) + 2 * max(G, D) + (G > D ? 1 : 0)`.
    public static func pair(controlling g: UInt32, controlled d: UInt32) -> UInt64 {
        UInt64(min(g, d)) << 32 | 2 * UInt64(max(g, d)) | (g > d ? 1 : 0)
    }
}

/// A candidate of the other agent, from SDP (`a=candidate`) or learned from a check.
/// Encodes as `{"address": {…}, "priority": 2130706431, "type": "host", "foundation": "1"}`.
public struct ICERemoteCandidate: Sendable, Hashable, Encodable, CustomStringConvertible {
    public var address: ICETransportAddress
    public var priority: UInt32
    public var type: ICECandidateType
    public var foundation: String

    public init(address: ICETransportAddress, priority: UInt32, type: ICECandidateType, foundation: String) {
        self.address = address
        self.priority = priority
        self.type = type
        self.foundation = foundation
    }

    public var description: String { "\(type) \(address) priority \(priority)" }
}

/// A candidate of this agent. `address` is what the peer sees; `base` is the socket it is
/// sent from (equal for host candidates, RFC 8445 §5.1.1.1).
/// Encodes as `{"address": {…}, "base": {…}, "priority": 1862270975, "type": "prflx"}`.
public struct ICELocalCandidate: Sendable, Hashable, Encodable, CustomStringConvertible {
    public var address: ICETransportAddress
    public var base: ICETransportAddress
    public var priority: UInt32
    public var type: ICECandidateType

    public init(address: ICETransportAddress, base: ICETransportAddress, priority: UInt32, type: ICECandidateType) {
        self.address = address
        self.base = base
        self.priority = priority
        self.type = type
    }

    public var description: String { "\(type) \(address) (base \(base)) priority \(priority)" }
}

extension ICETransportAddress {
    var isIPv6: Bool {
        if case .ipv6 = ip { return true }
        return false
    }
}
