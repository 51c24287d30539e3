import ParleyNetLinux
import ParleyWireCore

/// parleyd's one reading of its clocks (ParleyNetLinux's `SystemClock`), once per event:
/// the monotonic instant for timers and the wall clock for protocol times and records.
enum ServerClock {
    static func now() -> ClockReading { SystemClock.now() }

    /// The wall clock alone, in Unix milliseconds: the call engine's `wallClock` (its
    /// instant comes from its scheduler, virtual under test).
    static func unixMillis() -> Int64 { now().unixMilliseconds }

    /// The wall clock alone, in Unix nanoseconds: the media anchor's, for its legs' RTCP.
    static func unixNanoseconds() -> Int64 { now().unixNanoseconds }
}
