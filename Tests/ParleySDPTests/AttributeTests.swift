import ParleySDP
import Testing

@Suite("Typed attributes")
struct AttributeTests {
    @Test("Chromium offer: rtpmap, fmtp, rtcp-fb, extmap, msid, ssrc, rtcp")
    func chromiumMediaAttributes() throws {
        let audio = try #require(try Fixture.chromiumOffer.parsed.media.first)
        let maps = try audio.rtpMaps()
        #expect(maps.first == RTPMap(payloadType: 111, encodingName: "opus", clockRate: 48000, channels: 2))
        #expect(maps.contains(RTPMap(payloadType: 110, encodingName: "telephone-event", clockRate: 48000)))
        #expect(maps.contains(RTPMap(payloadType: 126, encodingName: "telephone-event", clockRate: 8000)))
        let opusFmtp = try #require(try audio.formatParameters().first { $0.payloadType == 111 })
        #expect(opusFmtp.parameters == [.init(name: "minptime", value: "10"), .init(name: "useinbandfec", value: "1")])
        #expect(opusFmtp["USEINBANDFEC"] == "1")
        let red = try #require(try audio.formatParameters().first { $0.payloadType == 63 })
        #expect(red.parameters == [.init(name: "111/111")])
        #expect(try audio.rtcpFeedback() == [RTCPFeedback(payloadType: 111, type: "transport-cc")])
        let extensions = try audio.extensionMaps()
        #expect(extensions.first == ExtensionMap(id: 1, uri: ExtensionMap.audioLevelURI))
        #expect(extensions.contains { $0.uri == ExtensionMap.midURI })
        let msid = try #require(try audio.msids().first)
        #expect(msid.trackID != nil)
        let ssrcs = try audio.ssrcAttributes()
        #expect(ssrcs.count == 2 && ssrcs[0].attribute == "cname" && ssrcs[1].attribute == "msid")
        #expect(ssrcs[1].value == msid.attributeValue)
        #expect(try audio.rtcp() == RTCPAttribute(port: 9, connection: .init(address: "0.0.0.0")))
    }

    @Test("Chromium offer: ICE and DTLS")
    func chromiumTransport() throws {
        let audio = try #require(try Fixture.chromiumOffer.parsed.media.first)
        #expect(audio.iceUsernameFragment?.count == 4)
        #expect(audio.icePassword?.count == 24)
        #expect(audio.iceOptions == ["trickle"])
        let fingerprint = try #require(try audio.fingerprints().first)
        #expect(fingerprint.algorithm == "sha-256" && fingerprint.bytes.count == 32)
        #expect(try audio.setup() == .actpass)
        let candidates = try audio.iceCandidates()
        #expect(candidates.count == 2)
        let udp = candidates[0]
        #expect(udp.component == 1 && udp.isUDP && udp.type == .host && udp.address == "10.203.0.2" && udp.addressKind == .ipv4)
        #expect(udp.priority == 2_122_260_223)
        #expect(udp.generation == 0 && udp.networkID == 1 && udp.networkCost == nil)
        #expect(udp.port == audio.port)
        let tcp = candidates[1]
        #expect(tcp.transport == "tcp" && tcp.tcpType == "active" && tcp.port == 9)
    }

    @Test("Firefox offer: upper-case transport, RTCP component, directional extmap")
    func firefoxAttributes() throws {
        let sdp = try Fixture.firefoxOffer.parsed
        let audio = try #require(sdp.media.first)
        let candidates = try audio.iceCandidates()
        #expect(candidates.contains { $0.component == 2 })
        #expect(candidates.allSatisfy { $0.transport == "UDP" ? $0.isUDP : !$0.isUDP })
        #expect(try audio.extensionMaps().contains(ExtensionMap(id: 2, direction: .recvonly, uri: "urn:ietf:params:rtp-hdrext:csrc-audio-level")))
        #expect(try audio.rtpMaps().contains(RTPMap(payloadType: 9, encodingName: "G722", clockRate: 8000, channels: 1)))
        // Session-level fingerprint and direction.
        #expect(try sdp.fingerprints().count == 1)
        #expect(sdp.explicitDirection == .sendrecv)
        #expect(audio.hasEndOfCandidates)
    }

    @Test("aiortc offer: three fingerprints")
    func aiortcFingerprints() throws {
        let audio = try #require(try Fixture.aiortcOffer.parsed.media.first)
        #expect(try audio.fingerprints().map(\.algorithm) == ["sha-256", "sha-384", "sha-512"])
        #expect(try audio.fingerprints().map(\.bytes.count) == [32, 48, 64])
    }

    struct CandidateCase: Sendable, CustomTestStringConvertible {
        let text: String
        let check: @Sendable (ICECandidate) -> Bool
        var testDescription: String { text }
    }

    static let candidateCases: [CandidateCase] = [
        .init(text: "1 1 udp 2130706431 127.0.0.1 5000 typ host") { $0.addressKind == .ipv4 && $0.extensions.isEmpty },
        .init(text: "842163049 1 udp 1677729535 203.0.113.7 61665 typ srflx raddr 10.0.0.2 rport 54321 generation 0 ufrag EsAw network-cost 10") {
            $0.type == .serverReflexive && $0.relatedAddress == "10.0.0.2" && $0.relatedPort == 54321
                && $0.usernameFragment == "EsAw" && $0.networkCost == 10 && $0.generation == 0
        },
        .init(text: "3 1 UDP 92217087 198.51.100.9 3478 typ relay raddr 0.0.0.0 rport 0") { $0.type == .relayed && $0.relatedPort == 0 },
        .init(text: "4 1 udp 1845501695 2001:db8::1 4000 typ prflx") { $0.type == .peerReflexive && $0.addressKind == .ipv6 },
        .init(text: "5 1 udp 2122260223 fe80::1%eth0 4000 typ host") { $0.addressKind == .ipv6 },
        .init(text: "6 1 udp 2122260223 ::ffff:192.0.2.1 4000 typ host") { $0.addressKind == .ipv6 },
        .init(text: "7 1 udp 2122260223 3c1b9f2e-5a49-4c1f-9a7e-0c2d4b7f1e11.local 51234 typ host generation 0 network-id 2") {
            $0.addressKind == .fqdn && $0.isMDNS && $0.networkID == 2
        },
        .init(text: "8 1 tcp 1518280447 192.0.2.4 9 typ host tcptype passive x-custom y") { $0.tcpType == "passive" && $0.extensionValue("x-custom") == "y" },
        .init(text: "candidate:9 1 udp 1 192.0.2.5 1 typ host") { $0.foundation == "9" },
        .init(text: "a+/Z 256 udp 4294967295 host.example.com 65535 typ funny") { $0.type == .other("funny") && $0.component == 256 && $0.addressKind == .fqdn && !$0.isMDNS },
    ]

    @Test("RFC 8839 §5.1 candidate grammar", arguments: candidateCases)
    func candidateGrammar(_ item: CandidateCase) throws {
        let candidate = try ICECandidate(attributeValue: item.text)
        #expect(item.check(candidate))
        let expected = item.text.hasPrefix("candidate:") ? String(item.text.dropFirst(10)) : item.text
        #expect(candidate.attributeValue == expected)
        #expect(try ICECandidate(attributeValue: candidate.attributeValue) == candidate)
    }

    static let badCandidates = [
        "1 1 udp 1 127.0.0.1 5000 typ",  // too short
        "1 0 udp 1 127.0.0.1 5000 typ host",  // component 0
        "1 257 udp 1 127.0.0.1 5000 typ host",
        "1 1 udp 4294967296 127.0.0.1 5000 typ host",  // priority overflow
        "1 1 udp 1 127.0.0.256 5000 typ host",  // bad IPv4, not a name (no letter)
        "1 1 udp 1 2001:db8:::1 5000 typ host",
        "1 1 udp 1 1:2:3:4:5:6:7:8:9 5000 typ host",
        "1 1 udp 1 127.0.0.1 65536 typ host",
        "1 1 udp 1 127.0.0.1 5000 type host",
        "1 1 udp 1 127.0.0.1 5000 typ host generation",  // extension without value
        "1 1 udp 1 127.0.0.1 5000 typ srflx raddr 1.2.3.4 rport x",
        "has_underscore 1 udp 1 127.0.0.1 5000 typ host",
        "1 1 udp 1 -bad-.example 5000 typ host",
    ]

    @Test("malformed candidates throw .malformedAttribute", arguments: badCandidates)
    func badCandidate(_ text: String) {
        #expect(throws: SDPError.self) { try ICECandidate(attributeValue: text) }
        do { _ = try ICECandidate(attributeValue: text) } catch { #expect(error.kind == .malformedAttribute) }
    }

    @Test("typed accessor errors carry the attribute's line")
    func accessorErrorLine() throws {
        let sdp = try SessionDescription(parsing: "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 9 RTP/AVP 0\r\na=rtpmap:0 PCMU\r\n")
        do {
            _ = try sdp.media[0].rtpMaps()
            Issue.record("accepted a broken rtpmap")
        } catch {
            #expect(error.kind == .malformedAttribute)
            #expect(error.line == 6)
            #expect(error.description.hasPrefix("line 6: malformed a=rtpmap:"))
        }
    }

    @Test("typed values serialize to text that parses back equal")
    func typedRoundTrips() throws {
        func check<T: SDPAttributeValue>(_ value: T) throws {
            #expect(try T(attributeValue: value.attributeValue) == value)
        }
        try check(RTPMap(payloadType: 111, encodingName: "opus", clockRate: 48000, channels: 2))
        try check(FormatParameters(payloadType: 111, parameters: [.init(name: "minptime", value: "10"), .init(name: "usedtx", value: "1")]))
        try check(RTCPFeedback(payloadType: nil, type: "nack", parameter: "pli"))
        try check(PacketTime(milliseconds: 20))
        try check(MaxPacketTime(milliseconds: 22.5))
        try check(Fingerprint(algorithm: "sha-256", bytes: [0, 0xAB, 0xFF]))
        try check(DTLSSetup.holdconn)
        try check(ExtensionMap(id: 3, direction: .sendonly, uri: "urn:x", extensionAttributes: "a b"))
        try check(SDPGroup(semantics: "BUNDLE", identifiers: ["0", "1"]))
        try check(MSID(streamID: "-", trackID: "t"))
        try check(SSRCAttribute(ssrc: 4_294_967_295, attribute: "cname", value: "x:y"))
        try check(SSRCGroup(semantics: "FID", ssrcs: [1, 2]))
        try check(RTCPAttribute(port: 9, connection: .init(address: "::1")))
        #expect(Fingerprint(algorithm: "sha-256", bytes: [0, 0xAB]).attributeValue == "sha-256 00:AB")
    }

    static let badValues: [(String, @Sendable (String) throws -> Void)] = [
        ("rtpmap 128 x/1", { _ = try RTPMap(attributeValue: $0) }),
        ("rtpmap 0 PCMU/0", { _ = try RTPMap(attributeValue: $0) }),
        ("fmtp", { _ = try FormatParameters(attributeValue: $0) }),
        ("rtcp-fb 200 nack", { _ = try RTCPFeedback(attributeValue: $0) }),
        ("ptime -20", { _ = try PacketTime(attributeValue: $0) }),
        ("ptime 1e3", { _ = try PacketTime(attributeValue: $0) }),
        ("fingerprint sha-256 0:AB", { _ = try Fingerprint(attributeValue: $0) }),
        ("fingerprint sha-256 +F:AB", { _ = try Fingerprint(attributeValue: $0) }),
        ("setup both", { _ = try DTLSSetup(attributeValue: $0) }),
        ("extmap 0 urn:x", { _ = try ExtensionMap(attributeValue: $0) }),
        ("extmap 1/sideways urn:x", { _ = try ExtensionMap(attributeValue: $0) }),
        ("ssrc x cname:y", { _ = try SSRCAttribute(attributeValue: $0) }),
        ("rtcp 9 IN IP4", { _ = try RTCPAttribute(attributeValue: $0) }),
    ]

    @Test("malformed attribute values throw .malformedAttribute")
    func badValuesThrow() {
        for (text, parse) in Self.badValues {
            let value = String(text.drop { $0 != " " }.dropFirst())
            do {
                try parse(value)
                Issue.record("accepted \(text)")
            } catch {
                #expect((error as? SDPError)?.kind == .malformedAttribute, "\(text)")
            }
        }
    }

    @Test("RFC 3264 §6.1 direction table")
    func directionTable() {
        #expect(MediaDirection.sendonly.answer(wanting: .sendrecv) == .recvonly)
        #expect(MediaDirection.recvonly.answer(wanting: .sendrecv) == .sendonly)
        #expect(MediaDirection.sendrecv.answer(wanting: .sendrecv) == .sendrecv)
        #expect(MediaDirection.inactive.answer(wanting: .sendrecv) == .inactive)
        #expect(MediaDirection.sendrecv.answer(wanting: .recvonly) == .recvonly)
        #expect(MediaDirection.sendrecv.answer(wanting: .sendonly) == .sendonly)
        #expect(MediaDirection.sendonly.answer(wanting: .sendonly) == .inactive)
        #expect(MediaDirection.recvonly.answer(wanting: .recvonly) == .inactive)
        for offer in MediaDirection.allCases { #expect(offer.answer(wanting: .inactive) == .inactive) }
    }

    @Test("RFC 4145 §4.1 setup answers")
    func setupAnswers() {
        #expect(DTLSSetup.actpass.answer(preferring: .active) == .active)
        #expect(DTLSSetup.actpass.answer(preferring: .passive) == .passive)
        #expect(DTLSSetup.active.answer(preferring: .active) == .passive)
        #expect(DTLSSetup.passive.answer(preferring: .passive) == .active)
        #expect(DTLSSetup.holdconn.answer(preferring: .active) == .holdconn)
    }
}
