import CALSA
import CLinux
import Glibc
import Synchronization

/// A joinable POSIX thread running one device's blocking I/O loop.
///
/// Not a Dispatch queue or a Swift task: the loop blocks in alsa-lib for 20 ms at a time
/// for as long as the call lasts, which would starve a cooperative pool thread.
struct DeviceThread: Sendable {
    private let thread: pthread_t

    /// Starts `body` on a new thread named `name` (at most 15 bytes, for top -H and gdb),
    /// with alsa-lib's log caught on it so xrun chatter never reaches stderr.
    init(name: String, device: String, body: @escaping @Sendable () -> Void) throws(ALSAError) {
        final class Start: Sendable {
            let name: String
            let body: @Sendable () -> Void
            init(name: String, body: @escaping @Sendable () -> Void) { self.name = name; self.body = body }
        }
        let context = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { context in
            let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
            _ = parley_pthread_setname_np(pthread_self(), start.name)
            let previous = parley_alsa_catch_log()
            start.body()
            parley_alsa_restore_log(previous)
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<Start>.fromOpaque(context).release()
            throw ALSAError("pthread_create", device: device, code: 0, message: String(cString: strerror(created)))
        }
        self.thread = thread
    }

    /// Waits for the thread to end.
    func join() {
        pthread_join(thread, nil)
    }
}

/// Hands a value that is not `Sendable` to exactly one other thread.
///
/// `@unchecked` because the compiler cannot see the hand-over: the creating thread
/// stores the value, never touches it again, and the device thread takes it once.
final class Handover<Value>: @unchecked Sendable {
    private var value: Value?
    init(_ value: Value) { self.value = value }
    func take() -> Value {
        defer { value = nil }
        return value!
    }
}

/// Keeps a device loop from running ahead of real time.
///
/// A real device paces its loop by blocking. Some ALSA PCMs never block: `null`, and the
/// `file` plugin over `null` that the tests record through, which would otherwise be read
/// or written as fast as the CPU allows (gigabytes of silence a second). The loop may run
/// 1 % faster than the monotonic clock plus `headroom` frames, a margin far beyond any
/// sound card's clock error, so a real device is never held back by it.
struct RealTimeCeiling {
    private let start: ContinuousClock.Instant
    private let headroom: Int
    private var frames = 0

    init(start: ContinuousClock.Instant = .now, headroomFrames: Int) {
        self.start = start
        self.headroom = headroomFrames
    }

    /// How long to wait before the next frame (zero when it may go now); at most 20 ms,
    /// so the caller can check its stop flag in between.
    func delay(now: ContinuousClock.Instant = .now) -> Duration {
        let ahead = frames - headroom
        guard ahead > 0 else { return .zero }
        // The frame may go once the clock, running 1 % slow for this purpose, reaches it.
        let due = start + .milliseconds(20) * Double(ahead) / 1.01
        return due > now ? min(due - now, .milliseconds(20)) : .zero
    }

    /// Counts one frame as done.
    mutating func advance() { frames += 1 }
}

/// Sleeps the calling thread (a device thread, never the pacer's).
func sleepThread(_ duration: Duration) {
    let (seconds, attoseconds) = duration.components
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    _ = nanosleep(&request, nil)
}
