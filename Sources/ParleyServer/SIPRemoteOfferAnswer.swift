import ParleySDP

/// Answers an offer the far side of an established SIP call makes in a re-INVITE or an
/// UPDATE (hold, resume, a session refresh with SDP), without touching the media leg: the
/// gateway's SIP leg keeps the codec the first answer chose, so an offer that still holds
/// it is answered with our last SDP, its direction the mirror of the offer's (RFC 3264
/// §6.1 and §8.4: `sendonly` is answered `recvonly`, `inactive` `inactive`) and its
/// origin version one higher when anything changed (§8); an offer without that codec asks
/// for a change the leg cannot make and is refused (nil: 488 Not Acceptable Here).
///
/// Our last SDP starts as the INVITE's offer, which lists every codec we could have used.
/// An answer names only the codec the call runs and its `telephone-event` (a far side
/// sends the first format of the answer it can: offered PCMU and PCMA on a call running
/// PCMA, it would switch to PCMU, which the leg drops), and `rtcp-mux` only when the call
/// multiplexes and the offer asks for it (RFC 8035: never in an answer to an offer
/// without it).
///
/// Sans-I/O: SDP text in, SDP text out.
struct SIPRemoteOfferAnswer {
    /// Our last SDP toward the far side (the offer of the INVITE, then each answer).
    private(set) var localSDP: SessionDescription
    /// The codec the far side's first answer chose (its first audio format), as
    /// `NAME/RATE` upper-cased; nil when unknown (any audio offer is then accepted).
    let negotiatedCodec: String?
    /// Whether the far side's first answer took RTCP multiplexing (RFC 5761), as the leg does.
    let multiplexesRTCP: Bool
    /// The audio of our INVITE's offer: every format an answer may name.
    private let offeredAudio: MediaDescription?
    /// Whether we hold the call (our last offer of `holdOffer(_:)` was `sendonly` or
    /// `inactive`): the far side's offers are then answered with at most `sendonly`.
    private(set) var localHold = false
    /// Whether the far side's last offer held us (`sendonly` or `inactive`).
    private(set) var remoteHolds = false
    /// Our SDP and hold before our offer in flight, for a refusal to put back (the old
    /// session goes on, RFC 3261 §14.1).
    private var beforeOffer: (sdp: SessionDescription, hold: Bool)?

    /// - Parameters:
    ///   - localSDP: the SDP of our INVITE.
    ///   - remoteAnswer: the far side's answer to it.
    init?(localSDP: String, remoteAnswer: String?) {
        guard let local = try? SessionDescription(parsing: localSDP) else { return nil }
        self.localSDP = local
        offeredAudio = local.media.first { $0.media == "audio" }
        if let remoteAnswer, let answer = try? SessionDescription(parsing: remoteAnswer),
           let audio = answer.media.first(where: { $0.media == "audio" && $0.port != 0 }),
           let first = audio.formats.first {
            negotiatedCodec = Self.codec(of: first, in: audio)
            multiplexesRTCP = audio.isRTCPMuxed
        } else {
            negotiatedCodec = nil
            multiplexesRTCP = false
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
        let offered = remoteAudio.direction(in: remote)
        remoteHolds = !offered.receives
        let direction = offered.answer(wanting: localHold ? .sendonly : .sendrecv)
        var audio = localSDP.media[localIndex]
        let before = audio
        audio.attributes.removeAll { MediaDirection(rawValue: $0.name) != nil }
        audio.attributes.append(direction.attribute)
        restrictFormats(of: &audio, answering: remoteAudio)
        if !(multiplexesRTCP && remoteAudio.isRTCPMuxed) { audio.attributes.removeAll { $0.name == "rtcp-mux" } }
        if audio != before {
            localSDP.media[localIndex] = audio
            let version = UInt64(localSDP.origin.sessionVersion) ?? 0
            localSDP.origin.sessionVersion = String(version &+ 1)
        }
        return localSDP.serializedBytes()
    }

    /// Our offer for a re-INVITE that holds (`held`) or resumes the call, RFC 3264 §8.4:
    /// our last SDP listing only the running codec and its telephone events (so the far
    /// side cannot answer with another codec the leg does not run), `a=sendonly` (or
    /// `a=inactive` while the far side holds us) or `a=sendrecv`, the origin version one
    /// higher. Nil when our SDP's version cannot grow. Taken as our SDP at once; a refusal
    /// (`offerRefused()`) puts the old one back.
    mutating func holdOffer(_ held: Bool) -> [UInt8]? {
        var next = localSDP
        if let index = next.media.firstIndex(where: { $0.media == "audio" }), let offered = offeredAudio {
            restrictFormats(of: &next.media[index], answering: offered)
            if !multiplexesRTCP { next.media[index].attributes.removeAll { $0.name == "rtcp-mux" } }
        }
        guard let offer = try? (held ? next.holding(remoteHolds: remoteHolds) : next.resuming()) else { return nil }
        beforeOffer = (localSDP, localHold)
        localSDP = offer
        localHold = held
        return offer.serializedBytes()
    }

    /// The far side answered our offer: it stands.
    mutating func offerAnswered() { beforeOffer = nil }

    /// The far side refused our offer: our SDP and hold are what they were before it.
    mutating func offerRefused() {
        guard let before = beforeOffer else { return }
        localSDP = before.sdp
        localHold = before.hold
        beforeOffer = nil
    }

    /// Makes `audio` (ours) list only the negotiated codec and, when `offer` has telephone
    /// events, ours at that codec's clock rate, in that order, with their rtpmap and fmtp
    /// (taken from our INVITE's offer, so an answer without events does not lose them for
    /// the next).
    private func restrictFormats(of audio: inout MediaDescription, answering offer: MediaDescription) {
        guard let negotiatedCodec, let offered = offeredAudio,
              let codec = offered.formats.first(where: { Self.codec(of: $0, in: offered) == negotiatedCodec })
        else { return }
        let clockRate = negotiatedCodec.split(separator: "/").last.map(String.init) ?? ""
        let offersEvents = offer.formats.contains { Self.codec(of: $0, in: offer)?.hasPrefix("TELEPHONE-EVENT/") == true }
        let events = offersEvents ? offered.formats.filter { Self.codec(of: $0, in: offered) == "TELEPHONE-EVENT/\(clockRate)" } : []
        let kept = [codec] + events
        audio.formats = kept
        let position = audio.attributes.firstIndex { Self.format(of: $0) != nil } ?? audio.attributes.endIndex
        audio.attributes.removeAll { Self.format(of: $0) != nil }
        let formatAttributes = offered.attributes.filter { attribute in Self.format(of: attribute).map(kept.contains) ?? false }
        audio.attributes.insert(contentsOf: formatAttributes, at: min(position, audio.attributes.endIndex))
    }

    /// The payload type an rtpmap or fmtp attribute describes; nil for other attributes.
    private static func format(of attribute: SDPAttribute) -> String? {
        switch attribute.name {
        case "rtpmap": (try? attribute.parsed(as: RTPMap.self)).map { String($0.payloadType) }
        case "fmtp": (try? attribute.parsed(as: FormatParameters.self))?.format
        default: nil
        }
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
