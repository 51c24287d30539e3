// MIRROR of Apple's AVAudioPlayer (AVFAudio), for type-checking and running the Apple
// media engine's sound files on Linux (AppleCheck/README.md).
import Dispatch
import MirrorSupport
import ParleyMediaCore

// Follows https://developer.apple.com/documentation/avfaudio/avaudioplayer
// (`class AVAudioPlayer : NSObject`; `init(contentsOf url: URL) throws`;
// `func prepareToPlay() -> Bool`, `func play() -> Bool`, `func pause()`, `func stop()`;
// `var isPlaying: Bool { get }`, `var numberOfLoops: Int` (a negative value loops until
// `stop()`), `var volume: Float`, `var duration: TimeInterval { get }`, `weak var delegate`).
// Behaves as the page describes for what the engine relies on: the initialiser throws for a
// file that is missing or is not audio, `play()` starts playback and returns true, playback
// ends after `duration` × (loops + 1) with `audioPlayerDidFinishPlaying(_:successfully:)`,
// and `stop()` ends it without that call. The real player decodes every format Core Audio
// knows (WAV, CAF, AIFF, MP3, AAC...); the mirror reads PCM WAV only and throws for the
// rest. Nothing is heard: there is no output device here. Errors are `NSError`s in
// `NSOSStatusErrorDomain` with Core Audio's codes (`fnfErr` -43 for a missing file,
// `kAudioFileUnsupportedFileTypeError` 'typ?' for content it cannot read), as Apple's
// player reports them. Not marked `Sendable`, as the page shows none.
/// A player for one sound file.
open class AVAudioPlayer: NSObject {
    /// Core Audio's "file not found" (`fnfErr`).
    static let fileNotFound = -43
    /// Core Audio's `kAudioFileUnsupportedFileTypeError` ('typ?').
    static let unsupportedFileType = 0x7479_703F

    private struct State {
        var playing = false
        /// Bumped by each play and stop, so a finished timer of an older play does nothing.
        var generation = 0
    }

    private let state = MirrorLocked(State())
    /// The URL the player was made for.
    public let url: URL?
    /// The file's length in seconds.
    public let duration: TimeInterval
    /// How many times playback repeats after the first; negative loops until `stop()`.
    open var numberOfLoops: Int = 0
    /// The playback volume, 0 to 1.
    open var volume: Float = 1
    /// Hears when playback finishes.
    open weak var delegate: (any AVAudioPlayerDelegate)?

    /// Opens the file at `url`; throws if it is missing or not audio the player can decode.
    public init(contentsOf url: URL) throws {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw NSError(domain: NSOSStatusErrorDomain, code: Self.fileNotFound)
        }
        let file: WAVFile
        do { file = try WAVFile(parsing: [UInt8](data)) } catch {
            throw NSError(domain: NSOSStatusErrorDomain, code: Self.unsupportedFileType)
        }
        self.url = url
        duration = Double(file.samples.count / max(file.channels, 1)) / Double(max(file.sampleRate, 1))
        super.init()
    }

    /// Whether the player is playing.
    open var isPlaying: Bool { state.withLock { $0.playing } }

    /// Readies the audio hardware; true on success.
    @discardableResult
    open func prepareToPlay() -> Bool { true }

    /// Starts (or resumes) playback; true on success.
    @discardableResult
    open func play() -> Bool {
        let generation = state.withLock { state -> Int in
            state.playing = true
            state.generation += 1
            return state.generation
        }
        guard numberOfLoops >= 0 else { return true }
        let length = duration * Double(numberOfLoops + 1)
        // The real player is not Sendable either; its end is reported on a system thread.
        let player = MirrorUnchecked(WeakPlayer(player: self))
        DispatchQueue.global().asyncAfter(deadline: .now() + length) {
            guard let finishedPlayer = player.value.player else { return }
            let finished = finishedPlayer.state.withLock { state -> Bool in
                guard state.generation == generation, state.playing else { return false }
                state.playing = false
                return true
            }
            if finished { finishedPlayer.delegate?.audioPlayerDidFinishPlaying(finishedPlayer, successfully: true) }
        }
        return true
    }

    /// Pauses playback.
    open func pause() { state.withLock { $0.playing = false; $0.generation += 1 } }

    /// Stops playback; the delegate is not told.
    open func stop() { state.withLock { $0.playing = false; $0.generation += 1 } }
}

/// A player the end-of-playback timer does not keep alive.
private struct WeakPlayer {
    weak var player: AVAudioPlayer?
}

// Follows https://developer.apple.com/documentation/avfaudio/avaudioplayerdelegate:
// every method optional; here requirements with default implementations (README.md).
/// Hears the end of playback and decoding errors.
public protocol AVAudioPlayerDelegate: NSObjectProtocol {
    /// Playback finished (not after `stop()`).
    func audioPlayerDidFinishPlaying(_ player: AVAudioPlayer, successfully flag: Bool)
    /// The player could not decode the file while playing.
    func audioPlayerDecodeErrorDidOccur(_ player: AVAudioPlayer, error: (any Error)?)
}

extension AVAudioPlayerDelegate {
    public func audioPlayerDidFinishPlaying(_ player: AVAudioPlayer, successfully flag: Bool) {}
    public func audioPlayerDecodeErrorDidOccur(_ player: AVAudioPlayer, error: (any Error)?) {}
}
