import Foundation
import ParleyCalling

/// Reads the server's two clocks once per event: the monotonic instant for timers and the
/// wall clock (Unix milliseconds) for protocol times and records.
enum ServerClock {
    static func now() -> CallTime {
        CallTime(instant: .now, unixMillis: unixMillis())
    }

    static func unixMillis() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }

    static func unixNanoseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}
