/// A 64-bit NTP timestamp as RTCP sender reports carry it (RFC 3550 §4): seconds since
/// 1900-01-01 00:00 UTC in the high 32 bits, the fraction of a second in the low 32.
///
/// Pure conversions only: the caller reads the clock and passes the time in.
public struct NTPTimestamp: Sendable, Hashable, Comparable, Encodable {
    /// Seconds from the NTP epoch (1900) to the Unix epoch (1970).
    public static let unixEpochOffset: Int64 = 2_208_988_800

    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public init(seconds: UInt32, fraction: UInt32) {
        rawValue = UInt64(seconds) << 32 | UInt64(fraction)
    }

    /// The NTP time of a Unix time given in nanoseconds. Seconds are taken modulo 2^32,
    /// as the field does (era 1 starts in 2036).
    public init(unixNanoseconds: Int64) {
        let (wholeSeconds, remainder) = Self.floorDivide(unixNanoseconds, 1_000_000_000)
        let seconds = UInt32(truncatingIfNeeded: wholeSeconds &+ Self.unixEpochOffset)
        // remainder < 10^9 < 2^30, so the product stays below 2^62.
        let fraction = UInt32((UInt64(remainder) << 32) / 1_000_000_000)
        self.init(seconds: seconds, fraction: fraction)
    }

    public var seconds: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 32) }
    public var fraction: UInt32 { UInt32(truncatingIfNeeded: rawValue) }

    /// The middle 32 bits (16.16 fixed point seconds): the "compact" form that the LSR
    /// and DLSR fields of a report block use (RFC 3550 §6.4.1).
    public var compact: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 16) }

    /// Unix time in nanoseconds, taking the seconds as era 0 (1900-2036).
    public var unixNanoseconds: Int64 {
        let wholeSeconds = Int64(seconds) - Self.unixEpochOffset
        // Rounded to the nearest nanosecond; fraction * 10^9 < 2^62.
        let nanos = Int64((UInt64(fraction) * 1_000_000_000 + (1 << 31)) >> 32)
        return wholeSeconds * 1_000_000_000 + nanos
    }

    public static func < (lhs: NTPTimestamp, rhs: NTPTimestamp) -> Bool { lhs.rawValue < rhs.rawValue }

    // MARK: Compact (middle 32 bits) arithmetic, RFC 3550 §6.4.1

    /// The DLSR value to report: time from receiving the last sender report to sending
    /// this report, both given as compact NTP, in units of 1/65536 s (wraps modulo 2^32).
    public static func delaySinceLastSenderReport(lastReportArrival: UInt32, now: UInt32) -> UInt32 {
        now &- lastReportArrival
    }

    /// Round-trip time from a report block received at `arrival` (compact NTP) with
    /// its LSR and DLSR fields: A - LSR - DLSR, in 1/65536 s. Nil when LSR is 0 (no
    /// sender report received yet) or the result would be negative (clock trouble).
    public static func roundTripTime(arrival: UInt32, lastSenderReport: UInt32, delaySinceLastSenderReport: UInt32) -> UInt32? {
        guard lastSenderReport != 0 else { return nil }
        let elapsed = arrival &- lastSenderReport
        guard elapsed >= delaySinceLastSenderReport, elapsed < 0x8000_0000 else { return nil }
        return elapsed - delaySinceLastSenderReport
    }

    /// Compact NTP units (1/65536 s) to nanoseconds.
    public static func nanoseconds(fromCompact value: UInt32) -> Int64 {
        Int64((UInt64(value) * 1_000_000_000) >> 16)
    }

    /// Nanoseconds to compact NTP units (1/65536 s), clamped to the 32-bit field.
    public static func compact(fromNanoseconds nanoseconds: Int64) -> UInt32 {
        guard nanoseconds > 0 else { return 0 }
        let (high, low) = UInt64(nanoseconds).multipliedFullWidth(by: 65536)
        guard high == 0 else { return UInt32.max }
        return UInt32(clamping: low / 1_000_000_000)
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        var q = a / b
        var r = a % b
        if r < 0 { q -= 1; r += b }
        return (q, r)
    }

    /// `{"seconds": s, "fraction": f, "compact": c}`: numbers that stay exact in JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(seconds, forKey: .seconds)
        try container.encode(fraction, forKey: .fraction)
        try container.encode(compact, forKey: .compact)
    }

    private enum CodingKeys: String, CodingKey { case seconds, fraction, compact }
}
