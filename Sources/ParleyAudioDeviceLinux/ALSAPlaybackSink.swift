public import ParleyMediaCore
import Synchronization

/// A speaker: an `AudioSink` that plays to an ALSA playback device.
///
/// The media leg's pacer calls `consume(_:)` every 20 ms on its event-loop thread, which
/// must never wait for a device. So `consume` only appends the frame to a small queue
/// (dropping the oldest, counted as an overrun, when full), and a thread of the sink's
/// own writes queued frames to the device. When the queue is empty the thread writes
/// 20 ms of silence instead (counted as an underrun), so the device itself never runs dry
/// and the next frame plays without a device restart.
///
/// It takes 48 kHz mono frames only, what the media leg plays: any other format is
/// refused with `CodecError` `.invalidArgument`, as `WAVFileSink` does (the leg never
/// sends one, so converting would be dead code).
///
/// ```swift
/// let speaker = ALSAPlaybackSink(device: "default")
/// try speaker.start()
/// try await leg.start(source: microphone, sink: speaker)
/// ...
/// speaker.stop()
/// ```
public final class ALSAPlaybackSink: AudioSink, Sendable {
    /// What happened so far; a snapshot, readable from any thread.
    public struct Counters: Sendable, Hashable {
        /// Frames `consume(_:)` accepted into the queue.
        public var framesQueued: Int
        /// Queued frames written to the device.
        public var framesPlayed: Int
        /// 20 ms of silence written because the queue was empty (also from `start()`
        /// until the first frame arrives).
        public var underruns: Int
        /// Queued frames dropped, oldest first, because the queue was full (frames came
        /// faster than the device played them).
        public var overruns: Int
        /// Device underruns (the thread did not write in time) and suspends that ALSA
        /// recovered from, each an audible gap.
        public var xrunsRecovered: Int
        /// Frames refused by `consume(_:)` for their format.
        public var framesRejected: Int
    }

    /// The device name given to `init`.
    public var device: String { runner.device }

    private let runner: DeviceRunner
    private let state: State

    /// The queue and counters, apart from the sink so that the playback thread holds
    /// them and not the sink: releasing a running sink then stops it (`deinit`).
    private final class State: Sendable {
        let queue: Mutex<FrameQueue>
        let queued = Atomic<Int>(0)
        let played = Atomic<Int>(0)
        let underruns = Atomic<Int>(0)
        let overruns = Atomic<Int>(0)
        let rejected = Atomic<Int>(0)
        init(queueFrames: Int) { queue = Mutex(FrameQueue(capacity: queueFrames)) }
    }

    /// A sink for `device`; nothing is opened until `start()`.
    /// - Parameters:
    ///   - device: an ALSA PCM name (`default`, `plughw:1`...), as ``ALSAPCM``.
    ///   - queueFrames: 20 ms frames the queue holds before dropping the oldest (at least 1).
    ///   - bufferPeriods: the device's ring buffer in 20 ms periods, as ``ALSAPCM``; the
    ///     thread keeps it full, so it is most of the output latency.
    ///   - definitions: ALSA configuration text defining `device`, as ``ALSAPCM``.
    public init(device: String = "default", queueFrames: Int = 4, bufferPeriods: Int = 4, definitions: String? = nil) {
        runner = DeviceRunner(device: device, direction: .playback, definitions: definitions, bufferPeriods: bufferPeriods)
        state = State(queueFrames: queueFrames)
    }

    deinit {
        runner.stop()
    }

    /// Opens the device and starts the playback thread; does nothing if already started.
    /// May be called again after `stop()`.
    /// - Throws: `ALSAError` if the device cannot be opened or set to 48 kHz mono S16.
    public func start() throws(ALSAError) {
        let (state, runner) = (self.state, self.runner)
        // Nothing from before this start: frames queued while stopped are stale.
        try runner.start(threadName: "alsa-playback", opened: { state.queue.withLock { $0.removeAll() } }) { pcm throws(ALSAError) in
            try Self.play(to: pcm, from: state, runner: runner)
        }
    }

    /// Stops the thread (waiting for it, at most about 120 ms) and closes the device;
    /// frames still queued are dropped, not played. Harmless if not started or already
    /// stopped.
    public func stop() {
        runner.stop()
        state.queue.withLock { $0.removeAll() }
    }

    /// True between `start()` and `stop()`, also after the device failed (see `failure`).
    public var isRunning: Bool { runner.isRunning }

    /// The error that ended the playback thread (device unplugged...), if it ended so;
    /// `consume(_:)` still accepts frames, which are then dropped.
    public var failure: ALSAError? { runner.failure }

    /// The counters now.
    public var counters: Counters {
        Counters(framesQueued: state.queued.load(ordering: .relaxed), framesPlayed: state.played.load(ordering: .relaxed),
                 underruns: state.underruns.load(ordering: .relaxed), overruns: state.overruns.load(ordering: .relaxed),
                 xrunsRecovered: runner.xrunsRecovered.load(ordering: .relaxed), framesRejected: state.rejected.load(ordering: .relaxed))
    }

    /// Queues a 20 ms frame for the device. Never blocks on the device. Frames given
    /// while the sink is stopped are queued and dropped at the next `start()`.
    /// - Throws: `CodecError` `.invalidArgument` unless the frame is 48 kHz mono.
    public func consume(_ frame: AudioFrame) throws(CodecError) {
        do {
            try frame.requireFormat(sampleRate: ALSAPCM.sampleRate, channels: 1, for: "ALSA playback sink")
        } catch {
            state.rejected.add(1, ordering: .relaxed)
            throw error
        }
        state.queued.add(1, ordering: .relaxed)
        if state.queue.withLock({ $0.push(frame.samples) }) {
            state.overruns.add(1, ordering: .relaxed)
        }
    }

    /// The playback thread's loop: wait for room, write the oldest queued frame or silence.
    private static func play(to pcm: ALSAPCM, from state: State, runner: DeviceRunner) throws(ALSAError) {
        var ceiling = RealTimeCeiling(headroomFrames: runner.bufferPeriods)
        let silence = [Int16](repeating: 0, count: ALSAPCM.frameSamples)
        while !runner.shouldStop {
            runner.xrunsRecovered.store(pcm.xrunsRecovered, ordering: .relaxed)
            let delay = ceiling.delay()
            if delay > .zero {
                sleepThread(delay)
                continue
            }
            guard try pcm.waitUntilReady(timeout: .milliseconds(100)) else { continue }
            // Taken only now that the device has room, so the frame waits in the queue
            // rather than in the device, where it could no longer be dropped.
            if let samples = state.queue.withLock({ $0.pop() }) {
                try pcm.write(samples)
                state.played.add(1, ordering: .relaxed)
            } else {
                try pcm.write(silence)
                state.underruns.add(1, ordering: .relaxed)
            }
            ceiling.advance()
        }
    }
}
