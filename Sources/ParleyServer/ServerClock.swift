import ParleyNetLinux
import ParleyWireCore

/// parleyd's one reading of its clocks, once per event: the monotonic instant for timers and
/// the wall clock for protocol times and records (`unixMilliseconds`).
enum ServerClock {
    static func now() -> ClockReading { SystemClock.now() }

    /// The wall clock alone, in Unix milliseconds: what the call engine takes as its
    /// `wallClock` (its instant comes from its scheduler, virtual under test).
    static func unixMillis() -> Int64 { now().unixMilliseconds }
}
