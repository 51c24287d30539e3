// Follows sdk/objc/api/peerconnection/RTCConfiguration.h: `iceServers` (array of
// RTCIceServer), `sdpSemantics` (RTCSdpSemantics: planB, unifiedPlan), `bundlePolicy`
// (balanced, maxCompat, maxBundle), `rtcpMuxPolicy` (negotiate, require),
// `continualGatheringPolicy` (gatherOnce, gatherContinually), each NS_ENUM(NSInteger)
// and a read-write property; RTCIceServer.h for `initWithURLStrings:`.
// The mirror's leg always bundles and muxes RTCP and gathers once; it records the
// policies and `RTCPeerConnection` refuses a configuration it could not honour.

/// How SDP describes media: Parley needs unified plan.
public enum RTCSdpSemantics: Int, Sendable {
    case planB
    case unifiedPlan
}

/// Which media get their own transport.
public enum RTCBundlePolicy: Int, Sendable {
    case balanced
    case maxCompat
    case maxBundle
}

/// Whether RTCP shares the RTP transport.
public enum RTCRtcpMuxPolicy: Int, Sendable {
    case negotiate
    case require
}

/// Whether ICE keeps gathering after the first round.
public enum RTCContinualGatheringPolicy: Int, Sendable {
    case gatherOnce
    case gatherContinually
}

// sdk/objc/api/peerconnection/RTCIceServer.h
/// A STUN or TURN server (the mirror gathers host candidates only and uses none).
open class RTCIceServer: NSObject {
    /// The server's URLs.
    public let urlStrings: [String]
    /// A server at these URLs.
    public init(urlStrings: [String]) { self.urlStrings = urlStrings }
}

// sdk/objc/api/peerconnection/RTCConfiguration.h
/// A peer connection's configuration.
open class RTCConfiguration: NSObject {
    /// STUN and TURN servers.
    open var iceServers: [RTCIceServer] = []
    /// Defaults to unified plan, as current libwebrtc does.
    open var sdpSemantics: RTCSdpSemantics = .unifiedPlan
    /// libwebrtc's default is balanced.
    open var bundlePolicy: RTCBundlePolicy = .balanced
    /// libwebrtc's default is require.
    open var rtcpMuxPolicy: RTCRtcpMuxPolicy = .require
    /// libwebrtc's default is gather once.
    open var continualGatheringPolicy: RTCContinualGatheringPolicy = .gatherOnce

    /// The defaults.
    public override init() { super.init() }
}
