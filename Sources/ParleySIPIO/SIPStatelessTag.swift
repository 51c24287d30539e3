import ParleySIP

/// The To tag of an answer sent without keeping state (a transport's 400, a 503 over the
/// rate limit, `SIPStatelessResponder`'s answers; RFC 3261 §8.2.6.2 asks for one): derived
/// from the request, so every retransmission of a request gets the same response, tag
/// included, as a transaction would have sent it.
enum SIPStatelessTag {
    /// 16 hex digits from the request's Call-ID, CSeq, From and top Via (its branch).
    static func make(for headers: SIPHeaders) -> String {
        // FNV-1a, 64 bits: not a secret, only a stable spread of the request's identity.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for name in ["call-id", "cseq", "from", "via"] {
            for byte in (headers.values(name).first ?? "").utf8 {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            }
            hash = (hash ^ 0xff) &* 0x0000_0100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
