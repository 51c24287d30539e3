import ParleySDP

/// Parses the input as SDP; when it parses, checks the round-trip invariants
/// (serialize -> parse gives the same value, and serializing that gives the same
/// bytes), then runs every typed accessor and the answer builder, which must throw
/// `SDPError` or return.
func fuzzSDP(_ input: UnsafeRawBufferPointer) {
    guard let sdp = try? SessionDescription(parsing: Array(input)) else { return }
    let bytes = sdp.serializedBytes()
    guard let again = try? SessionDescription(parsing: bytes) else {
        fatalError("serialized SDP does not parse again:\n\(String(decoding: bytes, as: UTF8.self))")
    }
    guard again == sdp else { fatalError("SDP round trip changed the value:\n\(String(decoding: bytes, as: UTF8.self))") }
    guard again.serializedBytes() == bytes else { fatalError("SDP serialization is not stable") }

    _ = try? sdp.groups()
    _ = try? sdp.fingerprints()
    _ = try? sdp.setup()
    for media in sdp.media {
        _ = try? media.rtpMaps()
        _ = try? media.formatParameters()
        _ = try? media.rtcpFeedback()
        _ = try? media.packetTime()
        _ = try? media.maxPacketTime()
        _ = try? media.extensionMaps()
        _ = try? media.msids()
        _ = try? media.ssrcAttributes()
        _ = try? media.ssrcGroups()
        _ = try? media.rtcp()
        _ = media.direction(in: sdp)
        // Typed values that parse must survive their own round trip.
        if let candidates = try? media.iceCandidates() {
            for candidate in candidates where (try? ICECandidate(attributeValue: candidate.attributeValue)) != candidate {
                fatalError("ICE candidate round trip changed: \(candidate.attributeValue)")
            }
        }
        if let maps = try? media.rtpMaps() {
            for map in maps where (try? RTPMap(attributeValue: map.attributeValue)) != map {
                fatalError("rtpmap round trip changed: \(map.attributeValue)")
            }
        }
    }
    if let answer = try? AudioOfferAnswer(local: fuzzCapabilities).answer(to: sdp) {
        let text = answer.description.serialized()
        guard (try? SessionDescription(parsing: text)) == answer.description else {
            fatalError("our answer does not parse back:\n\(text)")
        }
    }
}

private let fuzzCapabilities = LocalAudioCapabilities(
    iceUsernameFragment: "fuzz",
    icePassword: "fuzzfuzzfuzzfuzzfuzzfuzz",
    fingerprint: Fingerprint(algorithm: "sha-256", bytes: Array(repeating: 0xAB, count: 32)),
    sessionID: 1,
    iceLite: true,
    candidates: [ICECandidate(foundation: "1", priority: 1, address: "127.0.0.1", port: 9999)]
)
