import ParleyNetCore
import ParleyNetLinux
import MirrorSupport

// Follows sdk/objc/api/peerconnection/RTCPeerConnectionFactory.h: `init`,
// `audioSourceWithConstraints:` (nullable constraints; Swift `audioSource(with:)`),
// `audioTrackWithSource:trackId:` (`audioTrack(with:trackId:)`) and
// `peerConnectionWithConfiguration:constraints:delegate:` (nullable result and delegate;
// `peerConnection(with:constraints:delegate:)`).

/// What a factory's peer connections share: one event loop for their legs (libwebrtc's
/// network thread) and one serial signaling queue (its signaling thread).
final class MirrorFactoryCore: Sendable {
    let loop: EventLoop
    let signalingQueue = DispatchQueue(label: "mirror.webrtc.signaling")
    let bindAddresses: [SocketAddress]

    init(loop: EventLoop, bindAddresses: [SocketAddress]) {
        self.loop = loop
        self.bindAddresses = bindAddresses
    }

    deinit { loop.shutdown() }
}

/// Makes peer connections, sources and tracks.
open class RTCPeerConnectionFactory: NSObject {
    private let core: MirrorFactoryCore?

    /// Where the legs bind (their "interfaces"): loopback, where the tests' server
    /// listens. libwebrtc gathers on the device's interfaces instead.
    static let bindAddresses: [SocketAddress] = [.ipv4Loopback(port: 0)]

    private static let consentTimeout = MirrorLocked<Duration>(.seconds(30))

    /// MIRROR-ONLY: how long a connection's ICE consent (RFC 7675) may go unanswered
    /// before it fails, for connections made from now on. 30 s by default, about
    /// libwebrtc's; tests shorten it to see a failure quickly.
    public static var mirrorConsentTimeout: Duration {
        get { consentTimeout.current }
        set { consentTimeout.withLock { $0 = newValue } }
    }

    /// A factory with libwebrtc's default components.
    public override init() {
        core = (try? EventLoop(name: "mirror-webrtc-network")).map { MirrorFactoryCore(loop: $0, bindAddresses: Self.bindAddresses) }
        super.init()
    }

    /// The microphone's source (constraints kept, not applied).
    open func audioSource(with constraints: RTCMediaConstraints?) -> RTCAudioSource { RTCAudioSource() }

    /// A local audio track over `source`.
    open func audioTrack(with source: RTCAudioSource, trackId: String) -> RTCAudioTrack {
        RTCAudioTrack(source: source, trackId: trackId)
    }

    /// A peer connection, or nil when the configuration cannot be honoured (Plan B, which
    /// current libwebrtc has removed) or the factory could not start its threads.
    open func peerConnection(with configuration: RTCConfiguration, constraints: RTCMediaConstraints,
                             delegate: (any RTCPeerConnectionDelegate)?) -> RTCPeerConnection? {
        guard let core, configuration.sdpSemantics == .unifiedPlan else { return nil }
        return RTCPeerConnection(configuration: configuration, delegate: delegate, factory: core)
    }
}
