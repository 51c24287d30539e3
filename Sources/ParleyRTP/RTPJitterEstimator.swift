/// Interarrival jitter of RFC 3550 §6.4.1, computed as in Appendix A.8 with integer
/// arithmetic (the estimate is kept scaled by 16 so no floating point is needed).
///
/// Time is an input: pass each packet's arrival time converted to the RTP clock of the
/// stream (timestamp units, any fixed origin; wrapping is fine) together with the
/// packet's RTP timestamp.
///
///     D(i-1,i) = (R_i - R_{i-1}) - (S_i - S_{i-1})
///     J(i)     = J(i-1) + (|D(i-1,i)| - J(i-1)) / 16
public struct RTPJitterEstimator: Sendable, Hashable {
    private var previousTransit: Int32?
    /// J scaled by 16 (A.8 "jitter" variable in the integer variant).
    private var scaledJitter: UInt64 = 0

    public init() {}

    /// Accounts for one packet. Call it for packets that are in sequence order of
    /// arrival; A.8 does not require monotonic timestamps.
    public mutating func update(arrivalTime: UInt32, rtpTimestamp: UInt32) {
        // Differences are taken modulo 2^32, so both clocks may wrap.
        let transit = Int32(bitPattern: arrivalTime &- rtpTimestamp)
        defer { previousTransit = transit }
        guard let previous = previousTransit else { return }
        let d = UInt64(transit.subtractingReportingOverflow(previous).partialValue.magnitude)
        // A.8: jitter += d - ((jitter + 8) >> 4), with jitter scaled by 16.
        scaledJitter = scaledJitter + d - ((scaledJitter + 8) >> 4)
    }

    /// The jitter estimate in timestamp units, as a report block carries it.
    public var jitter: UInt32 { UInt32(clamping: scaledJitter >> 4) }

    /// The estimate scaled by 16 (keeps the fractional part; A.8).
    public var jitterTimes16: UInt64 { scaledJitter }
}
