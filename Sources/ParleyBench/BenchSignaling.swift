import ParleySignaling

/// Signaling frames as a server sees them most: a `call.start` with a browser-sized SDP
/// offer and custom headers (the largest common frame), and a `call.ended` event.
func signalingBenchmarks() -> [Benchmark] {
    let offer = [
        "v=0", "o=- 4611731400430051336 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0",
        "a=extmap-allow-mixed", "a=msid-semantic: WMS 5f2c1d3e-0b7a-4c9e-8d61-2a4f7b9c3e10",
        "m=audio 9 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126", "c=IN IP4 0.0.0.0", "a=rtcp:9 IN IP4 0.0.0.0",
        "a=candidate:1 1 udp 2122260223 192.168.1.20 51712 typ host generation 0 network-id 1",
        "a=candidate:2 1 udp 1686052607 203.0.113.7 51712 typ srflx raddr 192.168.1.20 rport 51712 generation 0",
        "a=ice-ufrag:Fr4n", "a=ice-pwd:Hk3jL9sPq2wXz8vB7nM1cD4e", "a=ice-options:trickle",
        "a=fingerprint:sha-256 26:3A:4D:BE:41:48:8F:B8:72:14:B0:03:23:39:DB:B9:F0:C8:DA:14:C1:6D:FC:F1:30:84:BF:3C:25:52:EC:A5",
        "a=setup:actpass", "a=mid:0", "a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level",
        "a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time", "a=sendrecv",
        "a=msid:5f2c1d3e-0b7a-4c9e-8d61-2a4f7b9c3e10 0c8e2d4f-6a1b-4e3c-9f57-8b2d1a6e4c90", "a=rtcp-mux",
        "a=rtpmap:111 opus/48000/2", "a=rtcp-fb:111 transport-cc", "a=fmtp:111 minptime=10;useinbandfec=1",
        "a=rtpmap:63 red/48000/2", "a=fmtp:63 111/111", "a=rtpmap:9 G722/8000", "a=rtpmap:0 PCMU/8000",
        "a=rtpmap:8 PCMA/8000", "a=rtpmap:13 CN/8000", "a=rtpmap:110 telephone-event/48000",
        "a=rtpmap:126 telephone-event/8000", "a=ssrc:3735928559 cname:Yq2Zk8Lp0Xw4Nv6B",
    ].joined(separator: "\r\n") + "\r\n"
    let start = SignalingMessage.callStart(.init(
        requestID: "2", callID: "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13", to: .user("bob"),
        headers: ["X-Order": "1187", "topic": "billing", "X-Customer": "cu_8a7f3e2d"], sdp: offer
    ))
    let ended = SignalingMessage.callEnded(.init(
        callID: "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13", cause: .hungUp,
        details: .init(startedTime: 1_764_421_201_200, progressedTime: 1_764_421_201_240, rungTime: 1_764_421_201_420,
                       answeredTime: 1_764_421_205_980, establishedTime: 1_764_421_206_110, endedTime: 1_764_421_318_400)
    ))
    let startFrame = SignalingCodec.encode(start)
    let endedFrame = SignalingCodec.encode(ended)
    return [
        Benchmark(format: "signaling", operation: "decode call.start (SDP offer)", messageBytes: startFrame.count) {
            if let message = try? SignalingCodec.decode(startFrame), case .callStart(let value) = message {
                benchmarkSink &+= value.sdp.utf8.count
            }
        },
        Benchmark(format: "signaling", operation: "encode call.start (SDP offer)", messageBytes: startFrame.count) {
            benchmarkSink &+= SignalingCodec.encode(start).count
        },
        Benchmark(format: "signaling", operation: "decode call.ended", messageBytes: endedFrame.count) {
            if let message = try? SignalingCodec.decode(endedFrame) {
                benchmarkSink &+= message.callID?.utf8.count ?? 0
            }
        },
        Benchmark(format: "signaling", operation: "encode call.ended", messageBytes: endedFrame.count) {
            benchmarkSink &+= SignalingCodec.encode(ended).count
        },
    ]
}
