#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Decides, one 20 ms frame at a time, whether one participant is talking, from frame
/// energy alone: a frame counts as speech when it is louder than an absolute floor
/// (`Configuration.activationLevel`) and louder than the participant's own noise floor by
/// a margin; `attackFrames` speech frames in a row make the participant active, and it
/// stays active until `hangoverFrames` frames in a row were not speech, so the quiet
/// stretches inside and between words do not cut it off.
///
/// The noise floor follows the participant's background: it starts at the first frame
/// that is not digital silence, falls at once to a quieter frame and rises toward a louder
/// one, fast while the participant is not active and slowly while it is. Steady noise that
/// starts after quiet therefore lifts the floor under itself within the attack (from the
/// lowest floor it would need to be about 20 dB louder than `minimumNoiseFloor` to stay
/// speech for three frames), while speech, which starts loud and keeps changing, gets
/// through. Digital silence (no packets, DTX) says nothing about the background and leaves
/// the floor alone. The floor never rises above `maximumNoiseFloor`, so a loud steady sound
/// (a talker who never pauses, a test tone) stays speech, and noise louder than that plus
/// the margin counts as someone talking. A participant whose very first sound is quiet
/// speech takes it for its floor and is heard from its next word, after a pause has
/// shown the real background.
///
/// Energy cannot tell a voice from a loud fan; what it does cheaply (one sum of squares
/// and one logarithm per frame) is keep quiet rooms, comfort noise and hiss out of the
/// mix, which is what makes the cost of a room grow with its talkers.
public struct VoiceActivityDetector: Sendable, Hashable {
    /// How the detector judges frames.
    public struct Configuration: Sendable, Hashable {
        /// A frame quieter than this (RMS, dBFS) is never speech, whatever the noise floor.
        public var activationLevel: Double = -45
        /// A speech frame is at least this much louder than the noise floor, in dB.
        public var noiseMargin: Double = 10
        /// The noise floor never rises above this (dBFS).
        public var maximumNoiseFloor: Double = -35
        /// The noise floor never falls below this (dBFS), so near-silence (comfort noise)
        /// does not leave it so low that the first noise after it looks like speech.
        public var minimumNoiseFloor: Double = -50
        /// A frame quieter than this (dBFS) is digital silence: not speech, and it leaves
        /// the noise floor where it was.
        public var silenceLevel: Double = -80
        /// The share of the gap to a louder frame the floor closes per frame while the
        /// participant is not active (0...1).
        public var idleFloorRise: Double = 0.3
        /// The same while the participant is active, so speech does not raise its own floor.
        public var activeFloorRise: Double = 0.02
        /// Speech frames in a row that make a participant active.
        public var attackFrames = 3
        /// Frames in a row without speech after which an active participant is not.
        public var hangoverFrames = 20
        /// The weight of a new speech frame in the smoothed level that ranks talkers (0...1).
        public var levelSmoothing: Double = 0.2

        public init() {}
    }

    public let configuration: Configuration
    /// Whether the participant is talking now.
    public private(set) var isActive = false
    /// The noise floor in dBFS (nil before the first frame).
    public private(set) var noiseFloor: Double?
    /// The smoothed level of its speech frames, dBFS: what ranks talkers.
    public private(set) var speechLevel: Double = -200
    /// The last frame's level, dBFS.
    public private(set) var lastLevel: Double = -200
    private var speechRun = 0
    private var silenceRun = 0

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Judges the next frame; returns whether the participant is active after it.
    @discardableResult
    public mutating func analyze(_ samples: UnsafeBufferPointer<Int16>) -> Bool {
        let level = Self.level(samples)
        lastLevel = level
        let isSilence = level < configuration.silenceLevel
        let floor = noiseFloor ?? min(max(level, configuration.minimumNoiseFloor), configuration.maximumNoiseFloor)
        let isSpeech = !isSilence && level >= configuration.activationLevel && level >= floor + configuration.noiseMargin
        if isSpeech {
            speechRun += 1
            silenceRun = 0
            speechLevel = speechLevel <= -200 ? level : speechLevel + (level - speechLevel) * configuration.levelSmoothing
            if !isActive && speechRun >= max(1, configuration.attackFrames) { isActive = true }
        } else {
            speechRun = 0
            silenceRun += 1
            if isActive && silenceRun >= max(1, configuration.hangoverFrames) { isActive = false }
        }
        if isSilence { return isActive }
        // The floor moves after the frame is judged, so a frame never hides itself.
        var next = floor
        if level < floor {
            next = level
        } else {
            next += (level - floor) * (isActive ? configuration.activeFloorRise : configuration.idleFloorRise)
        }
        noiseFloor = min(max(next, configuration.minimumNoiseFloor), configuration.maximumNoiseFloor)
        return isActive
    }

    /// Judges the next frame; returns whether the participant is active after it.
    @discardableResult
    public mutating func analyze(_ samples: [Int16]) -> Bool {
        samples.withUnsafeBufferPointer { analyze($0) }
    }

    /// Forgets the current talk spurt (muted, put on hold): the participant is not active,
    /// and has to speak for `attackFrames` again to become so. The noise floor stays.
    public mutating func reset() {
        isActive = false
        speechRun = 0
        silenceRun = 0
        speechLevel = -200
    }

    /// RMS level in dBFS (an RMS of 32768 is 0 dBFS), -200 for digital silence.
    public static func level(_ samples: UnsafeBufferPointer<Int16>) -> Double {
        guard !samples.isEmpty else { return -200 }
        var sum: Int64 = 0
        for sample in samples {
            let value = Int64(sample)
            sum &+= value * value
        }
        guard sum > 0 else { return -200 }
        let meanSquare = Double(sum) / Double(samples.count)
        return 10 * log10(meanSquare / (32768.0 * 32768.0))
    }
}
