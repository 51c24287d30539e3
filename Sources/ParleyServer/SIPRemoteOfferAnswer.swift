import ParleySDP

/// Answers an offer the far side of an established SIP call makes in a re-INVITE or an
/// UPDATE (hold, resume, a session refresh with SDP), without touching the media leg: the
/// gateway's SIP leg keeps the codec the first answer chose, so an offer that still holds
/// it is answered with our last SDP, its direction the mirror of the offer's (RFC 3264
/// §6.1 and §8.4: `sendonly` is answered `recvonly`, `inactive` `inactive`) and its
/// origin version one higher when anything changed (§8); an offer without that codec asks
/// for a change the leg cannot make and is refused (nil: 488 Not Acceptable Here).
///
/// Sans-I/O: SDP text in, SDP text out.
struct SIPRemoteOfferAnswer {
    /// Our last SDP toward the far side (the offer of the INVITE, then each answer).
    private(set) var localSDP: SessionDescription
    /// The codec the far side's first answer chose (its first audio format), as
    /// `NAME/RATE` upper-cased; nil when unknown (any audio offer is then accepted).
    let negotiatedCodec: String?

    /// - Parameters:
    ///   - localSDP: the SDP of our INVITE.
    ///   - remoteAnswer: the far side's answer to it.
    init?(localSDP: String, remoteAnswer: String?) {
        guard let local = try? SessionDescription(parsing: localSDP) else { return nil }
        self.localSDP = local
        if let remoteAnswer, let answer = try? SessionDescription(parsing: remoteAnswer),
           let audio = answer.media.first(where: { $0.media == "audio" && $0.port != 0 }),
           let first = audio.formats.first {
            negotiatedCodec = Self.codec(of: first, in: audio)
        } else {
            negotiatedCodec = nil
        }
    }

    /// The answer to `offer`, or nil when it must be refused with 488.
    mutating func answer(to offer: [UInt8]) -> [UInt8]? {
        guard let remote = try? SessionDescription(parsing: offer),
              let remoteAudio = remote.media.first(where: { $0.media == "audio" }),
              let localIndex = localSDP.media.firstIndex(where: { $0.media == "audio" })
        else { return nil }
        // A port of zero removes the stream: the call would have no audio left.
        guard remoteAudio.port != 0 else { return nil }
        if let negotiatedCodec {
            let offered = remoteAudio.formats.compactMap { Self.codec(of: $0, in: remoteAudio) }
            guard offered.contains(negotiatedCodec) else { return nil }
        }
        let direction = remoteAudio.direction(in: remote).answer(wanting: .sendrecv)
        var audio = localSDP.media[localIndex]
        let before = audio
        audio.attributes.removeAll { MediaDirection(rawValue: $0.name) != nil }
        audio.attributes.append(direction.attribute)
        if audio != before {
            localSDP.media[localIndex] = audio
            let version = UInt64(localSDP.origin.sessionVersion) ?? 0
            localSDP.origin.sessionVersion = String(version &+ 1)
        }
        return localSDP.serializedBytes()
    }

    /// `NAME/RATE` of payload type `format` in `media`: its rtpmap, else the static
    /// assignments SIP trunks leave unmapped (RFC 3551 table 4).
    static func codec(of format: String, in media: MediaDescription) -> String? {
        if let map = (try? media.rtpMaps())?.first(where: { String($0.payloadType) == format }) {
            return "\(map.encodingName.uppercased())/\(map.clockRate)"
        }
        switch format {
        case "0": return "PCMU/8000"
        case "8": return "PCMA/8000"
        case "9": return "G722/8000"
        default: return nil
        }
    }
}
