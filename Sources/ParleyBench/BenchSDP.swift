import ParleySDP

/// The Chromium audio offer from Tests/ParleySDPTests/Fixtures/chromium-offer.sdp.
private let chromiumOffer = """
    v=0\r
    o=- 7927960308709529161 2 IN IP4 127.0.0.1\r
    s=-\r
    t=0 0\r
    a=group:BUNDLE 0\r
    a=extmap-allow-mixed\r
    a=msid-semantic: WMS a667fa1e-5e4e-4a51-b91c-7ccbe77a767d\r
    m=audio 34825 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126\r
    c=IN IP4 10.203.0.2\r
    a=rtcp:9 IN IP4 0.0.0.0\r
    a=candidate:2648632937 1 udp 2122260223 10.203.0.2 34825 typ host generation 0 network-id 1\r
    a=candidate:1668561661 1 tcp 1518280447 10.203.0.2 9 typ host tcptype active generation 0 network-id 1\r
    a=ice-ufrag:+FmP\r
    a=ice-pwd:Kd+zmdFUxN/d7ngoRDvbTmuC\r
    a=ice-options:trickle\r
    a=fingerprint:sha-256 D3:34:25:92:46:F4:DD:D7:9A:AB:FD:E7:80:3D:54:06:4A:70:9F:86:71:BE:7C:92:C3:C9:0C:89:A0:90:21:3B\r
    a=setup:actpass\r
    a=mid:0\r
    a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level\r
    a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time\r
    a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01\r
    a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid\r
    a=sendrecv\r
    a=msid:a667fa1e-5e4e-4a51-b91c-7ccbe77a767d a361c95d-cf35-46e3-a275-e448dfe33516\r
    a=rtcp-mux\r
    a=rtcp-rsize\r
    a=rtcp-xr:rcvr-rtt=all\r
    a=rtpmap:111 opus/48000/2\r
    a=rtcp-fb:111 transport-cc\r
    a=fmtp:111 minptime=10;useinbandfec=1\r
    a=rtpmap:63 red/48000/2\r
    a=fmtp:63 111/111\r
    a=rtpmap:9 G722/8000\r
    a=rtpmap:0 PCMU/8000\r
    a=rtpmap:8 PCMA/8000\r
    a=rtpmap:13 CN/8000\r
    a=rtpmap:110 telephone-event/48000\r
    a=rtpmap:126 telephone-event/8000\r
    a=ssrc:3130600578 cname:Xw1CLCj5D936oKMU\r
    a=ssrc:3130600578 msid:a667fa1e-5e4e-4a51-b91c-7ccbe77a767d a361c95d-cf35-46e3-a275-e448dfe33516\r

    """

func sdpBenchmarks() -> [Benchmark] {
    let bytes = Array(chromiumOffer.utf8)
    guard let offer = try? SessionDescription(parsing: bytes) else { fatalError("bench fixture does not parse") }
    let negotiator = AudioOfferAnswer(local: LocalAudioCapabilities(
        iceUsernameFragment: "prly",
        icePassword: "parleyIcePassword0123456",
        fingerprint: Fingerprint(algorithm: "sha-256", bytes: Array(0..<32)),
        sessionID: 4_242_424_242,
        iceLite: true,
        candidates: [ICECandidate(foundation: "1", priority: 2_130_706_431, address: "10.203.0.1", port: 40000)]
    ))
    guard let answer = try? negotiator.answer(to: offer) else { fatalError("bench fixture cannot be answered") }
    let answerBytes = answer.description.serializedBytes().count
    return [
        Benchmark(format: "sdp", operation: "parse Chromium audio offer", messageBytes: bytes.count) {
            if let parsed = try? SessionDescription(parsing: bytes) { benchmarkSink &+= parsed.media.count }
        },
        Benchmark(format: "sdp", operation: "serialize Chromium audio offer", messageBytes: bytes.count) {
            benchmarkSink &+= offer.serializedBytes().count
        },
        Benchmark(format: "sdp", operation: "parse typed attributes (all)", messageBytes: bytes.count) {
            let media = offer.media[0]
            var count = 0
            count += (try? media.rtpMaps().count) ?? 0
            count += (try? media.iceCandidates().count) ?? 0
            count += (try? media.formatParameters().count) ?? 0
            count += (try? media.fingerprints().count) ?? 0
            count += (try? media.extensionMaps().count) ?? 0
            count += (try? media.ssrcAttributes().count) ?? 0
            benchmarkSink &+= count
        },
        Benchmark(format: "sdp", operation: "answer offer (parsed) + serialize", messageBytes: answerBytes) {
            if let made = try? negotiator.answer(to: offer) { benchmarkSink &+= made.description.serializedBytes().count }
        },
    ]
}
