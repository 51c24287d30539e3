/// Calls established per second over the last 60 s, for the `/metrics` gauge
/// `parley_call_setups_per_second`, from samples of `callsEstablished` taken at each
/// scrape (sans-I/O: the time is an argument).
///
/// The rate is measured from the newest sample at least 60 s old (or, in the first minute,
/// the oldest sample kept) to now, so with Prometheus scraping every 15 s it covers exactly
/// the last minute; the first scrape answers 0. Samples closer than 1 s are not kept, which
/// bounds memory at about 61 samples however often `/metrics` is read.
struct RESTSetupRateWindow: Sendable {
    static let windowMilliseconds: Int64 = 60_000
    static let sampleSpacingMilliseconds: Int64 = 1_000

    private var samples: [(time: Int64, count: Int)] = []

    /// The rate at `now` given the counter's value `count`.
    mutating func rate(count: Int, at now: Int64) -> Double {
        if let last = samples.last, now < last.time || count < last.count {
            // The clock went back or the counter restarted: earlier samples mean nothing now.
            samples.removeAll()
        }
        if samples.last.map({ now - $0.time >= Self.sampleSpacingMilliseconds }) ?? true {
            samples.append((now, count))
        }
        while samples.count >= 2, now - samples[1].time >= Self.windowMilliseconds {
            samples.removeFirst()
        }
        guard let oldest = samples.first, now > oldest.time else { return 0 }
        return Double(count - oldest.count) / (Double(now - oldest.time) / 1000)
    }

    var sampleCount: Int { samples.count }
}
