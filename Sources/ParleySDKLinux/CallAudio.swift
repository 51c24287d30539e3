@_spi(ParleyEngines) import ParleySDKCore
import ParleyMediaCore

/// The audio state shared by the controller and every call's source and sink: mute and
/// the sound file mixed into the output. The legs' pacers read it on their loop thread.
final class AudioMixState: Sendable {
    let muted = Locked(false)
    /// False while a system call integration holds the audio session inactive: calls
    /// send silence and play nothing (on Apple systems the audio unit is stopped).
    let sessionActive = Locked(true)
    let soundFile = Locked<SoundFile?>(nil)

    /// The next 20 ms of the sound file, if one is playing.
    func nextSoundFrame() -> [Int16]? {
        soundFile.withLock { file in
            guard var current = file else { return nil }
            let frame = current.nextFrame()
            file = current.isFinished ? nil : current
            return frame
        }
    }
}

/// When a call's audio began each way, on the wall clock (Unix nanoseconds): the first
/// frame taken from the source, and the first frame given to the sink. With both ends on
/// one clock, they place a recording against what the other side played (mouth-to-ear).
final class CallAudioTimeline: Sendable {
    let captureStarted = Locked<Int64?>(nil)
    let playoutStarted = Locked<Int64?>(nil)
    /// Reads the wall clock (the SDK's engine side provides it).
    let wallClock: @Sendable () -> Int64

    init(wallClock: @escaping @Sendable () -> Int64) { self.wallClock = wallClock }

    func noteCapture() { if captureStarted.current == nil { captureStarted.withLock { $0 = $0 ?? wallClock() } } }
    func notePlayout() { if playoutStarted.current == nil { playoutStarted.withLock { $0 = $0 ?? wallClock() } } }
}

/// A call's source: the configured audio, or silence of the same length while muted.
struct MutableSource: AudioSource, Sendable {
    private var inner: any AudioSource & Sendable
    private let state: AudioMixState
    private let timeline: CallAudioTimeline
    var sampleRate: Int { inner.sampleRate }
    var channels: Int { inner.channels }

    init(_ inner: any AudioSource & Sendable, state: AudioMixState, timeline: CallAudioTimeline) {
        self.inner = inner
        self.state = state
        self.timeline = timeline
    }

    mutating func nextFrame() -> AudioFrame? {
        guard let frame = inner.nextFrame() else { return nil }
        timeline.noteCapture()
        if state.muted.current || !state.sessionActive.current {
            return AudioFrame(samples: [Int16](repeating: 0, count: frame.samples.count), sampleRate: frame.sampleRate, channels: frame.channels)
        }
        return frame
    }
}

/// A looping or one-shot WAV source (48 kHz mono after conversion), silence after a one-shot ends.
struct SoundFileSource: AudioSource, Sendable {
    private var file: SoundFile
    var sampleRate: Int { SoundFile.sampleRate }
    var channels: Int { 1 }

    init(_ file: SoundFile) { self.file = file }

    mutating func nextFrame() -> AudioFrame? {
        AudioFrame(samples: file.nextFrame() ?? [Int16](repeating: 0, count: SoundFile.frameSamples), sampleRate: SoundFile.sampleRate)
    }
}

/// Where a call's received audio ends up: collected for a WAV file, or counted and dropped.
final class CallRecording: Sendable {
    let samples = Locked<[Int16]>([])
    let framesConsumed = Locked(0)
    let keepsSamples: Bool

    init(keepsSamples: Bool) { self.keepsSamples = keepsSamples }
}

/// A call's sink: the received audio with the sound file mixed over it (saturating),
/// recorded or counted, and played on `output` (the audio device) when there is one.
struct MixingSink: AudioSink, Sendable {
    let state: AudioMixState
    let recording: CallRecording
    let timeline: CallAudioTimeline
    var output: (any AudioSink & Sendable)? = nil

    mutating func consume(_ frame: AudioFrame) throws(CodecError) {
        guard state.sessionActive.current else { return }
        timeline.notePlayout()
        var samples = frame.samples
        if let sound = state.nextSoundFrame(), frame.channels == 1, frame.sampleRate == SoundFile.sampleRate {
            for i in 0..<min(samples.count, sound.count) {
                samples[i] = Int16(clamping: Int(samples[i]) + Int(sound[i]))
            }
        }
        recording.framesConsumed.withLock { $0 += 1 }
        if recording.keepsSamples {
            recording.samples.withLock { $0 += samples }
        }
        try output?.consume(AudioFrame(samples: samples, sampleRate: frame.sampleRate, channels: frame.channels))
    }
}
