import ParleyRTP

/// RTP and RTCP parse/serialize on the media relay's hot path.
func rtpBenchmarks() -> [Benchmark] {
    // A Chromium-style Opus packet: one-byte extension (audio level, transport-cc, mid)
    // and an 80-byte payload (32 kbit/s, 20 ms).
    let opusHeader: [UInt8] = [
        0x90, 0x6f, 0x4a, 0x1b, 0x5c, 0x3e, 0x7d, 0x00, 0x4f, 0x2a, 0x11, 0x9c,
        0xbe, 0xde, 0x00, 0x02, 0x10, 0xaa, 0x31, 0x00, 0x05, 0x40, 0x30, 0x00,
    ]
    let opus = opusHeader + (0..<80).map { UInt8(truncatingIfNeeded: $0 &* 37) }
    // A video-sized packet: same header, 1176-byte payload.
    let video = opusHeader + (0..<1176).map { UInt8(truncatingIfNeeded: $0 &* 11) }
    let opusPacket = try! RTPPacket(parsing: opus)

    // SR with one report block + SDES CNAME, as Chromium sends every few seconds.
    let srSDES = bytes("""
        81c8000c 4f2a119c e9b34c71 8a3d70a3 5c3e8a40 000001f4 00013880
        9a1b2c3d 0500000c 00014a2b 00000023 4c70f5c2 00008000
        81ca0006 4f2a119c 01106b346e355870327633515765304c5a730000
        """)
    let srSDESCompound = try! RTCPCompoundPacket(parsing: srSDES)
    // RR + Generic NACK + PLI.
    let feedback = bytes("""
        81c90007 00000001 00000002 00fffffd 00010000 00000000 00000000 00000000
        81cd0003 00000001 00000002 012c0005 81ce0002 00000001 00000002
        """)

    return [
        Benchmark(format: "rtp", operation: "parse opus+ext (slices, no copy)", messageBytes: opus.count) {
            let packet = try! RTPPacket(parsing: opus)
            benchmarkSink &+= Int(packet.sequenceNumber) &+ packet.payload.count
        },
        Benchmark(format: "rtp", operation: "parse + audio level lookup", messageBytes: opus.count) {
            let packet = try! RTPPacket(parsing: opus)
            benchmarkSink &+= Int(packet.headerExtension?.value(forID: 1)?.first ?? 0)
        },
        Benchmark(format: "rtp", operation: "parse + decode extension elements", messageBytes: opus.count) {
            let packet = try! RTPPacket(parsing: opus)
            benchmarkSink &+= (try! packet.headerExtension?.elements().count) ?? 0
        },
        Benchmark(format: "rtp", operation: "serialize opus+ext", messageBytes: opus.count) {
            benchmarkSink &+= try! opusPacket.serialized().count
        },
        Benchmark(format: "rtp", operation: "relay: parse, rewrite SSRC, serialize", messageBytes: opus.count) {
            var packet = try! RTPPacket(parsing: opus)
            packet.ssrc = 0x1234_5678
            packet.sequenceNumber &+= 7
            benchmarkSink &+= try! packet.serialized().count
        },
        Benchmark(format: "rtp", operation: "parse video packet", messageBytes: video.count) {
            let packet = try! RTPPacket(parsing: video)
            benchmarkSink &+= packet.payload.count
        },
        Benchmark(format: "rtcp", operation: "parse SR + SDES", messageBytes: srSDES.count) {
            let compound = try! RTCPCompoundPacket(parsing: srSDES)
            benchmarkSink &+= compound.packets.count
        },
        Benchmark(format: "rtcp", operation: "serialize SR + SDES", messageBytes: srSDES.count) {
            benchmarkSink &+= try! srSDESCompound.serialized().count
        },
        Benchmark(format: "rtcp", operation: "parse RR + NACK + PLI", messageBytes: feedback.count) {
            let compound = try! RTCPCompoundPacket(parsing: feedback)
            benchmarkSink &+= compound.packets.count
        },
    ]
}

private func bytes(_ hex: String) -> [UInt8] {
    let digits = hex.utf8.compactMap { c -> UInt8? in
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }
    return stride(from: 0, to: digits.count - 1, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
}
