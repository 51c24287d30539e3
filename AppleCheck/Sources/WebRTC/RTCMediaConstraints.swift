// Follows sdk/objc/api/peerconnection/RTCMediaConstraints.h
// (`initWithMandatoryConstraints:optionalConstraints:`, both nullable dictionaries of
// strings). The mirror keeps them and applies none: Parley's engine passes
// OfferToReceiveAudio, which our leg always does.
/// Constraints on an offer, an answer, a source or a peer connection.
open class RTCMediaConstraints: NSObject {
    let mandatory: [String: String]
    let optional: [String: String]

    /// Constraints from their two dictionaries.
    public init(mandatoryConstraints: [String: String]?, optionalConstraints: [String: String]?) {
        mandatory = mandatoryConstraints ?? [:]
        optional = optionalConstraints ?? [:]
    }
}

/// `kRTCMediaConstraintsOfferToReceiveAudio` (RTCMediaConstraints.h).
public let kRTCMediaConstraintsOfferToReceiveAudio = "OfferToReceiveAudio"
/// `kRTCMediaConstraintsOfferToReceiveVideo` (RTCMediaConstraints.h).
public let kRTCMediaConstraintsOfferToReceiveVideo = "OfferToReceiveVideo"
/// `kRTCMediaConstraintsValueTrue` (RTCMediaConstraints.h).
public let kRTCMediaConstraintsValueTrue = "true"
/// `kRTCMediaConstraintsValueFalse` (RTCMediaConstraints.h).
public let kRTCMediaConstraintsValueFalse = "false"
