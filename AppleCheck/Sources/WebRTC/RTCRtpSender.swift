// Follows sdk/objc/api/peerconnection/RTCRtpSender.h and RTCRtpReceiver.h: classes with
// `senderId`/`receiverId`, a nullable `track`, and on the sender a nullable
// `dtmfSender` (`id<RTCDtmfSender>`). The headers also declare protocols of the same
// names, which Swift imports as `RTCRtpSenderProtocol`/`RTCRtpReceiverProtocol`; the
// mirror declares the classes only.

// sdk/objc/api/peerconnection/RTCRtpSender.h
/// Sends one track.
open class RTCRtpSender: NSObject {
    /// The sender's id.
    public let senderId: String
    /// The track it sends.
    open var track: RTCMediaStreamTrack?
    /// The streams it belongs to.
    open var streamIds: [String]
    let mirrorDtmf: MirrorDtmfSender

    init(track: RTCMediaStreamTrack, streamIds: [String], peer: MirrorPeer) {
        senderId = track.trackId
        self.track = track
        self.streamIds = streamIds
        mirrorDtmf = MirrorDtmfSender(peer: peer)
    }

    /// Sends DTMF on this sender's transport: present for an audio sender.
    open var dtmfSender: (any RTCDtmfSender)? { track?.kind == kRTCMediaStreamTrackKindAudio ? mirrorDtmf : nil }
}

// sdk/objc/api/peerconnection/RTCRtpReceiver.h
/// Receives one track.
open class RTCRtpReceiver: NSObject {
    /// The receiver's id.
    public let receiverId: String
    /// The track it receives (disable it to stop playing it).
    open var track: RTCMediaStreamTrack?

    init(track: RTCMediaStreamTrack) {
        receiverId = track.trackId
        self.track = track
    }
}
