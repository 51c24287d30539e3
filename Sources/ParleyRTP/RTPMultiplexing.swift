/// Telling RTP from RTCP on one port (RFC 5761 §4), for a receiver and for
/// `parley inspect` guessing what a hex dump is.
public enum RTPMultiplexing {
    /// What a datagram most likely is.
    public enum Kind: Sendable, Hashable {
        case rtp
        case rtcp
        /// Too short, or not version 2.
        case neither
    }

    /// RFC 5761 §4: version 2 and a second byte of 192-223 means RTCP (payload types
    /// 64-95 are avoided on muxed sessions for exactly this reason); any other version 2
    /// datagram of at least 12 bytes is RTP, of at least 4 bytes with an RTCP type, RTCP.
    public static func classify(_ bytes: ArraySlice<UInt8>) -> Kind {
        guard bytes.count >= 4, bytes[bytes.startIndex] >> 6 == 2 else { return .neither }
        let second = bytes[bytes.startIndex + 1]
        if (192...223).contains(second) { return .rtcp }
        return bytes.count >= RTPPacket.fixedHeaderSize ? .rtp : .neither
    }

    public static func classify(_ bytes: [UInt8]) -> Kind { classify(bytes[...]) }
}
