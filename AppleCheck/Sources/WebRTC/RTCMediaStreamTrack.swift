// Follows sdk/objc/api/peerconnection/RTCMediaStreamTrack.h (`kind`, `trackId`, read-write
// `isEnabled`), RTCAudioTrack.h (`source`), RTCMediaSource.h and RTCAudioSource.h
// (`volume`). The header: a disabled track's frames are replaced, so a disabled local
// audio track sends silence and a disabled remote one plays nothing; the mirror does that.
import MirrorSupport

/// `kRTCMediaStreamTrackKindAudio` (RTCMediaStreamTrack.h).
public let kRTCMediaStreamTrackKindAudio = "audio"

/// A track's on/off switch, read by the audio unit off the caller's thread.
final class MirrorTrackSwitch: Sendable {
    let enabled = MirrorLocked(true)
}

// sdk/objc/api/peerconnection/RTCMediaStreamTrack.h
/// A media track.
open class RTCMediaStreamTrack: NSObject {
    /// "audio" or "video".
    public let kind: String
    /// The track's id.
    public let trackId: String
    let mirrorSwitch = MirrorTrackSwitch()

    init(kind: String, trackId: String) {
        self.kind = kind
        self.trackId = trackId
    }

    /// Whether the track's media flows (a disabled audio track is silence).
    open var isEnabled: Bool {
        get { mirrorSwitch.enabled.current }
        set { mirrorSwitch.enabled.withLock { $0 = newValue } }
    }
}

// sdk/objc/api/peerconnection/RTCMediaSource.h
/// A source of media.
open class RTCMediaSource: NSObject {}

// sdk/objc/api/peerconnection/RTCAudioSource.h
/// The device's microphone as libwebrtc captures it.
open class RTCAudioSource: RTCMediaSource {
    /// Gain on the source (0 to 10); recorded, not applied by the mirror.
    open var volume: Double = 1
}

// sdk/objc/api/peerconnection/RTCAudioTrack.h
/// An audio track.
open class RTCAudioTrack: RTCMediaStreamTrack {
    /// Its source (the microphone for a local track).
    public let source: RTCAudioSource

    init(source: RTCAudioSource, trackId: String) {
        self.source = source
        super.init(kind: kRTCMediaStreamTrackKindAudio, trackId: trackId)
    }
}

// sdk/objc/api/peerconnection/RTCMediaStream.h (`streamId`)
/// A stream (declared for the delegate's signature; unified plan never reports one).
open class RTCMediaStream: NSObject {
    /// The stream's id.
    public let streamId: String
    init(streamId: String) { self.streamId = streamId }
}

// sdk/objc/api/peerconnection/RTCIceCandidate.h (`initWithSdp:sdpMLineIndex:sdpMid:`)
/// An ICE candidate (declared for the delegate's signature; the mirror does not trickle).
open class RTCIceCandidate: NSObject {
    /// The candidate's `a=candidate` line, without the `a=`.
    public let sdp: String
    /// Its m-line index.
    public let sdpMLineIndex: Int32
    /// Its m-line's mid.
    public let sdpMid: String?
    /// A candidate from its parts.
    public init(sdp: String, sdpMLineIndex: Int32, sdpMid: String?) {
        self.sdp = sdp
        self.sdpMLineIndex = sdpMLineIndex
        self.sdpMid = sdpMid
    }
}

// sdk/objc/api/peerconnection/RTCDataChannel.h
/// A data channel (declared for the delegate's signature; the mirror has none).
open class RTCDataChannel: NSObject {}
