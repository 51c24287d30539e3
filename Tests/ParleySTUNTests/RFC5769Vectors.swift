import ParleyWireCore

/// The test vectors of RFC 5769 §2, byte for byte as the RFC prints them. The same bytes are
/// in Tests/Fixtures/stun/rfc5769-2.x.hex (checked by a test) and, as binary, in
/// Fuzz/corpus/stun/. Every MESSAGE-INTEGRITY and FINGERPRINT in them was recomputed
/// independently when they were typed in, so each byte is covered by a check.
enum RFC5769 {
    /// §2.1 Sample Request: Binding request with SOFTWARE, PRIORITY, ICE-CONTROLLED, USERNAME
    /// (padded with three spaces), MESSAGE-INTEGRITY and FINGERPRINT.
    static let sampleRequest = hex("""
        00 01 00 58 21 12 a4 42 b7 e7 a7 01 bc 34 d6 86 fa 87 df ae
        80 22 00 10 53 54 55 4e 20 74 65 73 74 20 63 6c 69 65 6e 74
        00 24 00 04 6e 00 01 ff
        80 29 00 08 93 2f f9 b1 51 26 3b 36
        00 06 00 09 65 76 74 6a 3a 68 36 76 59 20 20 20
        00 08 00 14 9a ea a7 0c bf d8 cb 56 78 1e f2 b5 b2 d3 f2 49 c1 b5 71 a2
        80 28 00 04 e5 7a 3b cf
        """)

    /// §2.2 Sample IPv4 Response: XOR-MAPPED-ADDRESS 192.0.2.1:32853; SOFTWARE padded with a space.
    static let ipv4Response = hex("""
        01 01 00 3c 21 12 a4 42 b7 e7 a7 01 bc 34 d6 86 fa 87 df ae
        80 22 00 0b 74 65 73 74 20 76 65 63 74 6f 72 20
        00 20 00 08 00 01 a1 47 e1 12 a6 43
        00 08 00 14 2b 91 f5 99 fd 9e 90 c3 8c 74 89 f9 2a f9 ba 53 f0 6b e7 d7
        80 28 00 04 c0 7d 4c 96
        """)

    /// §2.3 Sample IPv6 Response: XOR-MAPPED-ADDRESS [2001:db8:1234:5678:11:2233:4455:6677]:32853.
    static let ipv6Response = hex("""
        01 01 00 48 21 12 a4 42 b7 e7 a7 01 bc 34 d6 86 fa 87 df ae
        80 22 00 0b 74 65 73 74 20 76 65 63 74 6f 72 20
        00 20 00 14 00 02 a1 47 01 13 a9 fa a5 d3 f1 79 bc 25 f4 b5 be d2 b9 d9
        00 08 00 14 a3 82 95 4e 4b e6 7b f1 17 84 c9 7c 82 92 c2 75 bf e3 ed 41
        80 28 00 04 c8 fb 0b 4c
        """)

    /// §2.4 Sample Request with Long-Term Authentication: USERNAME, NONCE, REALM and
    /// MESSAGE-INTEGRITY, no FINGERPRINT; padded with zeros.
    static let longTermRequest = hex("""
        00 01 00 60 21 12 a4 42 78 ad 34 33 c6 ad 72 c0 29 da 41 2e
        00 06 00 12 e3 83 9e e3 83 88 e3 83 aa e3 83 83 e3 82 af e3 82 b9 00 00
        00 15 00 1c 66 2f 2f 34 39 39 6b 39 35 34 64 36 4f 4c 33 34 6f 4c 39 46 53 54 76 79 36 34 73 41
        00 14 00 0b 65 78 61 6d 70 6c 65 2e 6f 72 67 00
        00 08 00 14 f6 70 24 65 6d d6 4a 3e 02 b8 e0 71 2e 85 c9 a2 8c a8 96 66
        """)

    static let all: [(section: String, bytes: [UInt8])] = [
        ("2.1", sampleRequest), ("2.2", ipv4Response), ("2.3", ipv6Response), ("2.4", longTermRequest),
    ]

    /// The short-term password of §2.1-2.3.
    static let password = "VOkJxbRl1RmTxUk/WvJxBt"

    /// §2.4's long-term key MD5("マトリックス:example.org:TheMatrIX"), computed outside this
    /// package (Python hashlib) since ParleySTUN does not compute MD5.
    static let longTermKey = hex("e8ca7ad59d5eb0518e312911d2dab2a9")

    static let transactionID = hex("b7e7a701bc34d686fa87dfae")

    static func hex(_ text: String) -> [UInt8] {
        // Literal test data: a typo here should stop the tests loudly.
        try! Hex.decode(text)
    }
}
