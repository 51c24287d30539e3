import ParleyMediaLegCore
import ParleyMediaLegIO
import MirrorSupport

// Follows sdk/objc/api/peerconnection/RTCPeerConnection.h: the NS_ENUM(NSInteger) state
// types; RTCPeerConnectionDelegate (nine required methods, `didChangeConnectionState` among
// the optional ones: declared here as requirements with empty defaults, README's rule);
// the completion-handler typedefs (nullable description and error; nullable error), which
// Swift imports as escaping, non-Sendable closures; `delegate` (weak), `localDescription`,
// `remoteDescription`, the four states, `senders`, `receivers`, `close`,
// `addTrack:streamIds:` (nullable sender), `offerForConstraints:completionHandler:`,
// `answerForConstraints:completionHandler:`, `setLocalDescription:completionHandler:`,
// `setRemoteDescription:completionHandler:` and (Stats category)
// `statisticsWithCompletionHandler:`. Completion handlers and delegate calls come on
// libwebrtc's signaling thread: here the factory's serial signaling queue.
//
// Not modelled: SDP munging (the mirror's leg keeps its own SDP whatever is passed to
// `setLocalDescription`), trickle ICE, ICE restarts, renegotiation, more than one audio
// track, video, data channels; ICE "gathering" is the leg's host candidates on the
// factory's bind addresses (loopback unless a test says), not the device's interfaces.

/// The signaling state.
public enum RTCSignalingState: Int, Sendable {
    case stable, haveLocalOffer, haveLocalPrAnswer, haveRemoteOffer, haveRemotePrAnswer, closed
}

/// The ICE connection state.
public enum RTCIceConnectionState: Int, Sendable {
    case new, checking, connected, completed, failed, disconnected, closed, count
}

/// ICE and DTLS together: the connection's state.
public enum RTCPeerConnectionState: Int, Sendable {
    case new, connecting, connected, disconnected, failed, closed
}

/// The ICE gathering state.
public enum RTCIceGatheringState: Int, Sendable {
    case new, gathering, complete
}

/// `kRTCPeerConnectionErrorDomain` (RTCPeerConnection.h).
public let kRTCPeerConnectionErrorDomain = "org.webrtc.RTC_OBJC_TYPE(RTCPeerConnection)"
/// `kRTCSessionDescriptionErrorCode` (RTCPeerConnection.h).
public let kRTCSessionDescriptionErrorCode: Int32 = -1

/// `RTCCreateSessionDescriptionCompletionHandler`.
public typealias RTCCreateSessionDescriptionCompletionHandler = (RTCSessionDescription?, (any Error)?) -> Void
/// `RTCSetSessionDescriptionCompletionHandler`.
public typealias RTCSetSessionDescriptionCompletionHandler = ((any Error)?) -> Void
/// `RTCStatisticsCompletionHandler`.
public typealias RTCStatisticsCompletionHandler = (RTCStatisticsReport) -> Void

// RTCPeerConnection.h, `@protocol RTCPeerConnectionDelegate`
/// Hears a peer connection's events, on libwebrtc's signaling thread.
public protocol RTCPeerConnectionDelegate: NSObjectProtocol {
    func peerConnection(_ peerConnection: RTCPeerConnection, didChange stateChanged: RTCSignalingState)
    func peerConnection(_ peerConnection: RTCPeerConnection, didAdd stream: RTCMediaStream)
    func peerConnection(_ peerConnection: RTCPeerConnection, didRemove stream: RTCMediaStream)
    func peerConnectionShouldNegotiate(_ peerConnection: RTCPeerConnection)
    func peerConnection(_ peerConnection: RTCPeerConnection, didChange newState: RTCIceConnectionState)
    func peerConnection(_ peerConnection: RTCPeerConnection, didChange newState: RTCIceGatheringState)
    func peerConnection(_ peerConnection: RTCPeerConnection, didGenerate candidate: RTCIceCandidate)
    func peerConnection(_ peerConnection: RTCPeerConnection, didRemove candidates: [RTCIceCandidate])
    func peerConnection(_ peerConnection: RTCPeerConnection, didOpen dataChannel: RTCDataChannel)
    /// Optional in the header.
    func peerConnection(_ peerConnection: RTCPeerConnection, didChange newState: RTCPeerConnectionState)
}

extension RTCPeerConnectionDelegate {
    public func peerConnection(_ peerConnection: RTCPeerConnection, didChange newState: RTCPeerConnectionState) {}
}

// RTCPeerConnection.h, `@interface RTCPeerConnection` and its Stats category
/// A connection to the remote peer (here: Parley's server).
open class RTCPeerConnection: NSObject {
    private weak var weakDelegate: (any RTCPeerConnectionDelegate)?
    private let delegateLock = NSLock()
    let peer: MirrorPeer
    /// Keeps the factory's loop and queue alive as long as the connection.
    let factory: MirrorFactoryCore
    private let mirrorConfiguration: RTCConfiguration
    private let descriptions = MirrorLocked<(local: MirrorUnchecked<RTCSessionDescription>?, remote: MirrorUnchecked<RTCSessionDescription>?)>((nil, nil))
    private let tracks = MirrorLocked<(senders: MirrorUnchecked<[RTCRtpSender]>, receiver: MirrorUnchecked<RTCRtpReceiver>?)>((MirrorUnchecked([]), nil))

    init(configuration: RTCConfiguration, delegate: (any RTCPeerConnectionDelegate)?, factory: MirrorFactoryCore) {
        mirrorConfiguration = configuration
        self.factory = factory
        peer = MirrorPeer(loop: factory.loop, signalingQueue: factory.signalingQueue, bindAddresses: factory.bindAddresses)
        super.init()
        weakDelegate = delegate
        let me = MirrorWeak(self)
        peer.notify.withLock { $0 = { event in me.object?.deliver(event) } }
    }

    // libwebrtc closes a peer connection that is released without `close()`.
    deinit { peer.close() }

    /// Hears the connection's events (held weakly).
    public weak var delegate: (any RTCPeerConnectionDelegate)? {
        get { delegateLock.withLock { weakDelegate } }
        set { delegateLock.withLock { weakDelegate = newValue } }
    }

    private func deliver(_ event: MirrorPeer.MirrorEvent) {
        guard let delegate else { return }
        switch event {
        case .connection(let state): delegate.peerConnection(self, didChange: state)
        case .ice(let state): delegate.peerConnection(self, didChange: state)
        case .gathering(let state): delegate.peerConnection(self, didChange: state)
        case .signaling(let state): delegate.peerConnection(self, didChange: state)
        }
    }

    /// The configuration it was made with.
    public var configuration: RTCConfiguration { mirrorConfiguration }
    /// The local description; its candidates appear once gathering is complete.
    public var localDescription: RTCSessionDescription? { descriptions.current.local?.value }
    /// The remote description.
    public var remoteDescription: RTCSessionDescription? { descriptions.current.remote?.value }
    public var signalingState: RTCSignalingState { peer.state.current.signaling }
    public var iceConnectionState: RTCIceConnectionState { peer.state.current.ice }
    public var connectionState: RTCPeerConnectionState { peer.state.current.connection }
    public var iceGatheringState: RTCIceGatheringState { peer.state.current.gathering }
    /// The senders of the tracks added.
    public var senders: [RTCRtpSender] { tracks.current.senders.value }
    /// The receiver of the remote audio, once negotiated.
    public var receivers: [RTCRtpReceiver] { tracks.current.receiver.map { [$0.value] } ?? [] }

    /// Adds a track to send; nil if the connection is closed or has a sender for it already.
    public func add(_ track: RTCMediaStreamTrack, streamIds: [String]) -> RTCRtpSender? {
        guard !peer.state.current.closed, !senders.contains(where: { $0.track === track }) else { return nil }
        let sender = RTCRtpSender(track: track, streamIds: streamIds, peer: peer)
        tracks.withLock { $0.senders = MirrorUnchecked($0.senders.value + [sender]) }
        peer.state.withLock { $0.localSwitch = track.mirrorSwitch }
        return sender
    }

    /// Creates an offer (without candidates, as libwebrtc's before gathering).
    public func offer(for constraints: RTCMediaConstraints, completionHandler: @escaping RTCCreateSessionDescriptionCompletionHandler) {
        let handler = MirrorUnchecked(completionHandler)
        let peer = peer
        peer.enqueue {
            let result: Result<String, any Error>
            do {
                let sdp = try await peer.legForNegotiation().makeOffer()
                peer.state.withLock { $0.gatheredSDP = sdp }
                result = .success(sdp)
            } catch { result = .failure(error) }
            peer.signalingQueue.async {
                switch result {
                case .success(let sdp): handler.value(RTCSessionDescription(type: .offer, sdp: MirrorPeer.withoutCandidates(sdp)), nil)
                case .failure(let error): handler.value(nil, Self.error("offer", error))
                }
            }
        }
    }

    /// Creates the answer to the remote offer.
    public func answer(for constraints: RTCMediaConstraints, completionHandler: @escaping RTCCreateSessionDescriptionCompletionHandler) {
        let handler = MirrorUnchecked(completionHandler)
        let peer = peer
        peer.enqueue {
            let result: Result<String, any Error>
            do {
                guard let offer = peer.state.current.remoteOffer else {
                    throw MediaLegError(.state, "no remote offer to answer")
                }
                let sdp = try await peer.legForNegotiation().answer(offer: offer)
                peer.state.withLock { $0.telephoneEvents = sdp.contains("telephone-event/"); $0.gatheredSDP = sdp }
                result = .success(sdp)
            } catch { result = .failure(error) }
            peer.signalingQueue.async {
                switch result {
                case .success(let sdp): handler.value(RTCSessionDescription(type: .answer, sdp: MirrorPeer.withoutCandidates(sdp)), nil)
                case .failure(let error): handler.value(nil, Self.error("answer", error))
                }
            }
        }
    }

    /// Applies the local offer or answer, then gathers (the leg's host candidates): the
    /// gathering state goes to `.gathering`, then `.complete` with `localDescription` full.
    public func setLocalDescription(_ sdp: RTCSessionDescription, completionHandler: @escaping RTCSetSessionDescriptionCompletionHandler) {
        let handler = MirrorUnchecked(completionHandler)
        let type = sdp.type
        let peer = peer
        let me = MirrorWeak(self)
        peer.enqueue {
            guard let leg = peer.state.current.leg, type == .offer || type == .answer else {
                peer.signalingQueue.async { handler.value(Self.error("setLocalDescription", MediaLegError(.state, "no offer or answer was created"))) }
                return
            }
            // The SDP the leg made (the mirror ignores munging); its candidates come with gathering.
            guard let full = peer.state.current.gatheredSDP else {
                peer.signalingQueue.async { handler.value(Self.error("setLocalDescription", MediaLegError(.state, "no offer or answer was created"))) }
                return
            }
            me.object?.descriptions.withLock { $0.local = MirrorUnchecked(RTCSessionDescription(type: type, sdp: MirrorPeer.withoutCandidates(full))) }
            peer.emit(.signaling(type == .offer ? .haveLocalOffer : .stable))
            peer.signalingQueue.async { handler.value(nil) }
            peer.emit(.gathering(.gathering))
            me.object?.descriptions.withLock { $0.local = MirrorUnchecked(RTCSessionDescription(type: type, sdp: full)) }
            peer.emit(.gathering(.complete))
            if type == .answer {
                me.object?.addRemoteReceiver()
                do { try await peer.startIfNegotiated(leg) } catch { peer.emit(.connection(.failed)) }
            }
        }
    }

    /// Applies the remote offer or answer; with both descriptions in, ICE and DTLS start.
    public func setRemoteDescription(_ sdp: RTCSessionDescription, completionHandler: @escaping RTCSetSessionDescriptionCompletionHandler) {
        let handler = MirrorUnchecked(completionHandler)
        let description = MirrorUnchecked(sdp)
        let (type, text) = (sdp.type, sdp.sdp)
        let peer = peer
        let me = MirrorWeak(self)
        peer.enqueue {
            do {
                switch type {
                case .offer:
                    _ = try peer.legForNegotiation()
                    peer.state.withLock { $0.remoteOffer = text }
                    peer.emit(.signaling(.haveRemoteOffer))
                case .answer:
                    guard let leg = peer.state.current.leg else { throw MediaLegError(.state, "no offer was made") }
                    try await leg.acceptAnswer(text)
                    peer.state.withLock { $0.telephoneEvents = text.contains("telephone-event/") }
                    peer.emit(.signaling(.stable))
                default:
                    throw MediaLegError(.negotiation, "the mirror takes offers and answers only")
                }
            } catch {
                peer.signalingQueue.async { handler.value(Self.error("setRemoteDescription", error)) }
                return
            }
            me.object?.descriptions.withLock { $0.remote = description }
            peer.signalingQueue.async { handler.value(nil) }
            if type == .answer, let leg = peer.state.current.leg {
                me.object?.addRemoteReceiver()
                do { try await peer.startIfNegotiated(leg) } catch { peer.emit(.connection(.failed)) }
            }
        }
    }

    /// The receiver of the remote track, made when the remote description brings it.
    private func addRemoteReceiver() {
        tracks.withLock { tracks in
            guard tracks.receiver == nil else { return }
            // The receiver's track and the call's playout read one switch.
            let receiver = RTCRtpReceiver(track: MirrorRemoteAudioTrack(switch: peer.state.current.remoteSwitch))
            tracks.receiver = MirrorUnchecked(receiver)
        }
    }

    /// Ends the connection: the leg closes, no more delegate calls.
    public func close() { peer.close() }

    /// The W3C statistics of the connection, from the leg's figures.
    public func statistics(completionHandler: @escaping RTCStatisticsCompletionHandler) {
        let handler = MirrorUnchecked(completionHandler)
        let peer = peer
        Task {
            let figures = await peer.state.current.leg?.statistics
            peer.signalingQueue.async { handler.value(MirrorStatistics.report(figures)) }
        }
    }

    private static func error(_ operation: String, _ error: any Error) -> NSError {
        NSError(domain: kRTCPeerConnectionErrorDomain, code: Int(kRTCSessionDescriptionErrorCode),
                userInfo: [NSLocalizedDescriptionKey: "\(operation) failed: \(error)"])
    }
}

/// A remote audio track whose switch is the call's playout switch.
final class MirrorRemoteAudioTrack: RTCAudioTrack {
    private let playout: MirrorTrackSwitch
    init(switch playout: MirrorTrackSwitch) {
        self.playout = playout
        super.init(source: RTCAudioSource(), trackId: "remote-audio")
    }
    override var isEnabled: Bool {
        get { playout.enabled.current }
        set { playout.enabled.withLock { $0 = newValue } }
    }
}

/// A weak reference the mirror's Sendable closures carry.
final class MirrorWeak<Object: AnyObject>: @unchecked Sendable {
    // @unchecked: a weak reference, read only.
    weak var object: Object?
    init(_ object: Object) { self.object = object }
}
