public import ParleyMediaCore
import Synchronization

/// A microphone: an `AudioSource` that records from an ALSA capture device.
///
/// The media leg's pacer calls `nextFrame()` every 20 ms on its event-loop thread, which
/// must never wait for a device. So `start()` opens the device and starts a thread of its
/// own that reads 20 ms frames (48 kHz mono S16) into a small queue; `nextFrame()` only
/// takes the oldest frame from that queue, or returns 20 ms of silence (counted as an
/// underrun) when none is ready, so it never blocks and never returns nil. When the queue
/// is full the thread drops its oldest frame (counted as an overrun): delay stays bounded
/// by `queueFrames` × 20 ms.
///
/// ```swift
/// let microphone = ALSACaptureSource(device: "default")
/// try microphone.start()                 // throws ALSAError: no such device, busy...
/// try await leg.start(source: microphone, sink: speaker)
/// ...
/// microphone.stop()                      // joins the thread, closes the device
/// ```
public final class ALSACaptureSource: AudioSource, Sendable {
    /// What happened so far; a snapshot, readable from any thread.
    public struct Counters: Sendable, Hashable {
        /// 20 ms frames read from the device.
        public var framesCaptured: Int
        /// Frames `nextFrame()` returned from the device.
        public var framesDelivered: Int
        /// Calls of `nextFrame()` that found no frame ready and returned silence (also
        /// before `start()` and after `stop()`).
        public var underruns: Int
        /// Frames dropped, oldest first, because the queue was full (`nextFrame()` was not
        /// called often enough).
        public var overruns: Int
        /// Device overruns (the thread did not read in time) and suspends that ALSA
        /// recovered from, each losing some audio.
        public var xrunsRecovered: Int
    }

    /// The device name given to `init`.
    public var device: String { runner.device }
    /// Always 48000.
    public var sampleRate: Int { ALSAPCM.sampleRate }
    /// Always 1.
    public var channels: Int { 1 }

    private let runner: DeviceRunner
    private let state: State

    /// The queue and counters, apart from the source so that the capture thread holds
    /// them and not the source: releasing a running source then stops it (`deinit`).
    private final class State: Sendable {
        let queue: Mutex<FrameQueue>
        let captured = Atomic<Int>(0)
        let delivered = Atomic<Int>(0)
        let underruns = Atomic<Int>(0)
        let overruns = Atomic<Int>(0)
        init(queueFrames: Int) { queue = Mutex(FrameQueue(capacity: queueFrames)) }
    }

    /// A source for `device`; nothing is opened until `start()`.
    /// - Parameters:
    ///   - device: an ALSA PCM name (`default`, `plughw:1`...), as ``ALSAPCM``.
    ///   - queueFrames: 20 ms frames the queue holds before dropping the oldest (at least 1).
    ///   - bufferPeriods: the device's ring buffer in 20 ms periods, as ``ALSAPCM``.
    ///   - definitions: ALSA configuration text defining `device`, as ``ALSAPCM``.
    public init(device: String = "default", queueFrames: Int = 4, bufferPeriods: Int = 4, definitions: String? = nil) {
        runner = DeviceRunner(device: device, direction: .capture, definitions: definitions, bufferPeriods: bufferPeriods)
        state = State(queueFrames: queueFrames)
    }

    deinit {
        runner.stop()
    }

    /// Opens the device and starts the capture thread; does nothing if already started.
    /// May be called again after `stop()`.
    /// - Throws: `ALSAError` if the device cannot be opened or set to 48 kHz mono S16.
    public func start() throws(ALSAError) {
        let (state, runner) = (self.state, self.runner)
        // Nothing from before this start: frames queued while stopped are stale.
        try runner.start(threadName: "alsa-capture", opened: { state.queue.withLock { $0.removeAll() } }) { pcm throws(ALSAError) in
            try Self.capture(from: pcm, into: state, runner: runner)
        }
    }

    /// Stops the thread (waiting for it, at most about 120 ms) and closes the device.
    /// Harmless if not started or already stopped.
    public func stop() {
        runner.stop()
        state.queue.withLock { $0.removeAll() }
    }

    /// True between `start()` and `stop()`, also after the device failed (see `failure`).
    public var isRunning: Bool { runner.isRunning }

    /// The error that ended the capture thread (device unplugged...), if it ended so;
    /// `nextFrame()` returns silence from then on.
    public var failure: ALSAError? { runner.failure }

    /// The counters now.
    public var counters: Counters {
        Counters(framesCaptured: state.captured.load(ordering: .relaxed), framesDelivered: state.delivered.load(ordering: .relaxed),
                 underruns: state.underruns.load(ordering: .relaxed), overruns: state.overruns.load(ordering: .relaxed),
                 xrunsRecovered: runner.xrunsRecovered.load(ordering: .relaxed))
    }

    /// The oldest captured 20 ms frame (48 kHz mono), or 20 ms of silence if none is
    /// ready. Never blocks on the device and never returns nil.
    public func nextFrame() -> AudioFrame? {
        if let samples = state.queue.withLock({ $0.pop() }) {
            state.delivered.add(1, ordering: .relaxed)
            return AudioFrame(samples: samples, sampleRate: ALSAPCM.sampleRate)
        }
        state.underruns.add(1, ordering: .relaxed)
        return AudioFrame.silence(sampleRate: ALSAPCM.sampleRate)
    }

    /// The capture thread's loop: wait for a frame, read it, queue it.
    private static func capture(from pcm: ALSAPCM, into state: State, runner: DeviceRunner) throws(ALSAError) {
        var ceiling = RealTimeCeiling(headroomFrames: runner.bufferPeriods)
        var samples = [Int16](repeating: 0, count: ALSAPCM.frameSamples)
        while !runner.shouldStop {
            runner.xrunsRecovered.store(pcm.xrunsRecovered, ordering: .relaxed)
            let delay = ceiling.delay()
            if delay > .zero {
                sleepThread(delay)
                continue
            }
            guard try pcm.waitUntilReady(timeout: .milliseconds(100)) else { continue }
            try pcm.read(into: &samples)
            ceiling.advance()
            state.captured.add(1, ordering: .relaxed)
            if state.queue.withLock({ $0.push(samples) }) {
                state.overruns.add(1, ordering: .relaxed)
            }
        }
    }
}
