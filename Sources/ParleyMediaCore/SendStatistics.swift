public import ParleyRTP

/// What we sent on one SSRC, for the sender info of an SR (RFC 3550 §6.4.1): packet and
/// payload octet counts, and the RTP timestamp that corresponds to the SR's NTP time.
public struct SendStatistics: Sendable {
    public let ssrc: UInt32
    public let clockRate: UInt32
    /// Packets sent (the SR field wraps at 2^32).
    public private(set) var packetCount: UInt64 = 0
    /// Payload octets sent, headers and padding excluded (§6.4.1).
    public private(set) var octetCount: UInt64 = 0
    /// The RTP timestamp of the last packet sent and when it was sent.
    public private(set) var lastTimestamp: (rtp: UInt32, sent: UInt64)?
    /// Whether a packet went out since the last report was made (decides SR vs RR, §6.4).
    public private(set) var sentSinceLastReport = false

    public init(ssrc: UInt32, clockRate: UInt32) {
        self.ssrc = ssrc
        self.clockRate = max(clockRate, 1)
    }

    /// Accounts for one RTP packet sent at `now`.
    public mutating func record(timestamp: UInt32, payloadBytes: Int, now: UInt64) {
        packetCount &+= 1
        octetCount &+= UInt64(max(payloadBytes, 0))
        lastTimestamp = (timestamp, now)
        sentSinceLastReport = true
    }

    /// The RTP timestamp for `now`: the last packet's timestamp advanced by the time since
    /// it was sent, so the SR's NTP and RTP timestamps name the same instant (§6.4.1).
    public func rtpTimestamp(at now: UInt64) -> UInt32 {
        guard let last = lastTimestamp else { return 0 }
        let elapsed = now >= last.sent ? now - last.sent : 0
        return last.rtp &+ UInt32(truncatingIfNeeded: MediaClock.rtpUnits(nanoseconds: elapsed, clockRate: clockRate))
    }

    /// A sender report (without report blocks) for `now`; marks the interval reported.
    public mutating func makeSenderReport(now: UInt64, clock: MediaClock) -> RTCPSenderReport {
        sentSinceLastReport = false
        return RTCPSenderReport(ssrc: ssrc, ntpTimestamp: clock.ntpTimestamp(at: now), rtpTimestamp: rtpTimestamp(at: now),
                                packetCount: UInt32(truncatingIfNeeded: packetCount),
                                octetCount: UInt32(truncatingIfNeeded: octetCount))
    }

    /// Starts a new reporting interval without an SR (an RR was sent).
    public mutating func markReported() { sentSinceLastReport = false }
}
