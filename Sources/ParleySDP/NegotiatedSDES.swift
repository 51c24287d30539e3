/// What SDES (RFC 4568) agreed for one `RTP/SAVP` audio section: the crypto line the
/// answer picked and the two master keys. Each side protects what it sends with the key
/// it wrote itself, so ours protects our packets and the peer's unprotects theirs.
///
/// JSON: `{"tag": 1, "suite": "AES_CM_128_HMAC_SHA1_80"}`; the keys are left out.
public struct NegotiatedSDES: Sendable, Hashable, Encodable {
    /// The tag of the offered line the answer picked, which the answer echoes.
    public var tag: UInt32
    public var suite: CryptoAttribute.Suite
    /// Our master key then salt, from our `a=crypto` line: protects what we send.
    public var localKeyMaterial: [UInt8]
    /// The peer's, from its `a=crypto` line: unprotects what we receive.
    public var remoteKeyMaterial: [UInt8]

    public init(tag: UInt32, suite: CryptoAttribute.Suite, localKeyMaterial: [UInt8], remoteKeyMaterial: [UInt8]) {
        self.tag = tag
        self.suite = suite
        self.localKeyMaterial = localKeyMaterial
        self.remoteKeyMaterial = remoteKeyMaterial
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(tag, forKey: .tag)
        try c.encode(suite, forKey: .suite)
    }

    private enum CodingKeys: String, CodingKey { case tag, suite }
}
