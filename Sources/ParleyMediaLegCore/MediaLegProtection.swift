public import ParleySRTP

/// How a leg's RTP and RTCP look on the wire once its transport is up: SRTP with one
/// session each way (keys exported by DTLS, RFC 5764; or given by SDES, RFC 4568, on a plain
/// RTP leg), or no protection at all (plain RTP). The transport decides which; the leg's
/// core protects and unprotects every packet through it, so the per-packet path is the same
/// code whatever the transport.
public enum MediaLegProtection {
    /// SRTP/SRTCP with these sessions (RFC 3711).
    case srtp(inbound: SRTPSession, outbound: SRTPSession)
    /// RTP and RTCP in the clear.
    case none

    /// Creates the two SRTP sessions from key material (master key then salt) for each way.
    public static func srtp(profile: SRTPProfile, localKeyMaterial: [UInt8], remoteKeyMaterial: [UInt8]) throws(SRTPError) -> Self {
        .srtp(inbound: try SRTPSession(profile: profile, keyMaterial: remoteKeyMaterial, direction: .inbound),
              outbound: try SRTPSession(profile: profile, keyMaterial: localKeyMaterial, direction: .outbound))
    }

    /// Bytes protecting an RTP packet adds (the SRTP tag); 0 in the clear.
    public var rtpTrailerLength: Int {
        if case .srtp(_, let outbound) = self { return outbound.profile.rtpTrailerLength }
        return 0
    }

    /// The SRTP profile's RFC 5764 name, or nil in the clear.
    public var profileName: String? {
        if case .srtp(let inbound, _) = self { return inbound.profile.registeredName }
        return nil
    }

    /// What the inbound session counted (all zero in the clear).
    public var inboundCounters: SRTPCounters {
        if case .srtp(let inbound, _) = self { return inbound.counters }
        return SRTPCounters()
    }

    func protect(rtp packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        guard case .srtp(_, let outbound) = self else { return packet }
        return try outbound.protect(rtp: packet)
    }

    func unprotect(rtp packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        guard case .srtp(let inbound, _) = self else { return packet }
        return try inbound.unprotect(srtp: packet)
    }

    func protect(rtcp packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        guard case .srtp(_, let outbound) = self else { return packet }
        return try outbound.protectRTCP(rtcp: packet)
    }

    func unprotect(rtcp packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        guard case .srtp(let inbound, _) = self else { return packet }
        return try inbound.unprotectRTCP(srtcp: packet)
    }

    /// In place: the packet in the first `length` bytes becomes the one to send; returns
    /// its length.
    func protect(buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        guard case .srtp(_, let outbound) = self else { return length }
        return try outbound.protect(buffer: buffer, length: length)
    }

    /// In place: the received packet in the first `length` bytes becomes plain RTP;
    /// returns its length.
    func unprotect(buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        guard case .srtp(let inbound, _) = self else { return length }
        return try inbound.unprotect(buffer: buffer, length: length)
    }
}
