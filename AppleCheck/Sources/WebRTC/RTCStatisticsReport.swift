// Follows sdk/objc/api/peerconnection/RTCStatisticsReport.h: a report with `timestamp_us`
// (CFTimeInterval, microseconds since 1970) and `statistics` (id → RTCStatistics); each
// RTCStatistics has `id`, `timestamp_us`, `type` (the W3C stats type, e.g. "inbound-rtp")
// and `values` (NSNumber, NSString or arrays of them, under the W3C member names).

/// One `getStats()` report.
open class RTCStatisticsReport: NSObject {
    /// When it was taken, in microseconds since 1970.
    public let timestamp_us: CFTimeInterval
    /// Its statistics by id.
    public let statistics: [String: RTCStatistics]

    init(timestamp_us: CFTimeInterval, statistics: [String: RTCStatistics]) {
        self.timestamp_us = timestamp_us
        self.statistics = statistics
    }
}

// RTCStatisticsReport.h, the second interface
/// One object of a report.
open class RTCStatistics: NSObject {
    /// Its id in the report.
    public let id: String
    /// When it was measured, in microseconds since 1970.
    public let timestamp_us: CFTimeInterval
    /// The W3C stats type.
    public let type: String
    /// Its members.
    public let values: [String: NSObject]

    init(id: String, timestamp_us: CFTimeInterval, type: String, values: [String: NSObject]) {
        self.id = id
        self.timestamp_us = timestamp_us
        self.type = type
        self.values = values
    }
}

/// CoreFoundation's `CFTimeInterval` (a Double of seconds, here microseconds by the header's
/// use), which Foundation exports on Apple platforms and swift-corelibs-foundation does not.
public typealias CFTimeInterval = Double
