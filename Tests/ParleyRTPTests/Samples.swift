import ParleyWireCore

/// Hand-built packets, laid out from the RFC diagrams (field by field in the comments).
/// The same bytes are in Tests/Fixtures/rtp and Tests/Fixtures/rtcp for the CLI tests.
enum Sample {
    static func bytes(_ hex: String) -> [UInt8] {
        do { return try Hex.decode(hex) } catch { fatalError("bad sample hex: \(error)") }
    }

    // MARK: RTP

    /// RFC 3550 §5.1 minimal: V=2 P=0 X=0 CC=0 | M=0 PT=0 (PCMU) | seq 0x1234 |
    /// ts 1000 | SSRC 0xdeadbeef | 4 payload bytes.
    static let rtpMinimal = "80 00 1234 000003e8 deadbeef fffefdfc"

    /// V=2 P=1 X=0 CC=2 | M=1 PT=8 (PCMA) | seq 65535 | ts 0xffffffff | SSRC 0x01020304 |
    /// CSRC 0x11111111, 0x22222222 | payload "abc" | padding 00 00 03.
    static let rtpCSRCPadding = "a2 88 ffff ffffffff 01020304 11111111 22222222 616263 000003"

    /// Chromium-style Opus packet: V=2 X=1 | PT=111 | seq 0x4a1b | ts 0x5c3e7d00 |
    /// SSRC 0x4f2a119c | extension 0xBEDE, 2 words: id 1 (RFC 6464 audio level, L=0)
    /// 0xaa = V=1 level 42 dBov; id 3 (transport-wide cc, L=1) 0x0005; id 4 (sdes:mid,
    /// L=0) "0"; one padding byte | 12 bytes of Opus.
    static let rtpOpusOneByteExtension =
        "90 6f 4a1b 5c3e7d00 4f2a119c  bede 0002  10aa 310005 4030 00  780be4c136ecc58d8c494699"

    /// Two-byte form (RFC 8285 §4.3), appbits 0: id 1 length 1 0xaa; id 2 length 3 "abc".
    static let rtpTwoByteExtension = "90 60 0001 00000001 00000002  1000 0002  0101aa 0203616263  c0ffee"

    /// Generic (non-RFC 8285) extension with profile 0x1234 and one word; marker; empty payload.
    static let rtpGenericExtension = "90 e0 0002 00000010 00000003  1234 0001 cafebabe"

    /// RFC 4733 §2.3 event in RTP: PT 101, marker, "5" end bit, volume 10, duration 800.
    static let rtpTelephoneEvent = "80 e5 0100 00001f40 12345678  05 8a 0320"

    // MARK: RTCP

    /// Chromium-style compound: SR (RC=1) + SDES (one chunk, CNAME of 16 characters).
    /// SR: SSRC 0x4f2a119c, NTP 0xe9b34c71.8a3d70a3, RTP ts 0x5c3e8a40, 500 packets,
    /// 80000 octets; block for 0x9a1b2c3d: fraction 5, cumulative 12, highest 0x00014a2b,
    /// jitter 35, LSR 0x4c70f5c2, DLSR 0x8000 (0.5 s).
    /// SDES: CNAME "k4n5Xp2v3QWe0LZs", END, one null to the word boundary.
    static let rtcpChromiumSRSDES = """
        81c8000c 4f2a119c e9b34c71 8a3d70a3 5c3e8a40 000001f4 00013880
        9a1b2c3d 0500000c 00014a2b 00000023 4c70f5c2 00008000
        81ca0006 4f2a119c 0110 6b346e35587032763351576530 4c5a73 0000
        """

    /// RR with no blocks + BYE (SC=1) with reason "bye", padded (P=1, 4 bytes).
    static let rtcpRRByePadded = "80c90001 deadbeef  a1cb0003 deadbeef 03627965 00000004"

    /// RR with one block whose cumulative lost is negative (-3) + generic NACK (PID 300,
    /// BLP 0b101: lost 300, 301, 303) + PLI.
    static let rtcpFeedback = """
        81c90007 00000001 00000002 00fffffd 00010000 00000000 00000000 00000000
        81cd0003 00000001 00000002 012c0005
        81ce0002 00000001 00000002
        """

    /// Reduced-size RTCP (RFC 5506): a lone PLI.
    static let rtcpReducedSizePLI = "81ce0002 00000001 00000002"

    /// SDES with two chunks: (1) CNAME "a", NAME "Bob", PRIV prefix "x" value "yz";
    /// (2) no items. Then APP subtype 2 "PRLY" with one word, then XR (207) kept raw.
    static let rtcpSDESAppXR = """
        82ca0007 00000011 010161 0203426f62 0804017879 7a 0000 00000022 00000000
        82cc0003 00000011 50524c59 deadbeef
        80cf0002 00000011 04000000
        """

    /// SR with no report blocks and a one-word profile extension.
    static let rtcpSRProfileExtension = "80c80007 00000005 00000001 80000000 00000064 0000000a 00000640 feedf00d"
}
