// Follows sdk/objc/api/peerconnection/RTCSessionDescription.h: NS_ENUM(NSInteger,
// RTCSdpType) { offer, prAnswer, answer, rollback }, `initWithType:sdp:`, read-only
// `type` and `sdp`.
/// The kind of a session description.
public enum RTCSdpType: Int, Sendable {
    case offer
    case prAnswer
    case answer
    case rollback
}

/// An SDP offer or answer.
open class RTCSessionDescription: NSObject {
    /// Offer or answer.
    public let type: RTCSdpType
    /// The SDP text.
    public let sdp: String

    /// A description of this type with this SDP.
    public init(type: RTCSdpType, sdp: String) {
        self.type = type
        self.sdp = sdp
    }
}
