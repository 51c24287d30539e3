import Foundation
import ParleyMediaCore
@testable import ParleySDKLinux
@_spi(ParleyEngines) import ParleySDKCore
import Testing

/// Mute, the sound file mixed into the sink, and sound file decoding, without a leg.
@Suite struct CallAudioTests {
    private func temporaryWAV(_ file: WAVFile) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parley-sdk-\(UUID().uuidString).wav").path
        try file.write(path: path)
        return path
    }

    @Test func muteSendsSilenceOfTheSameLength() {
        let state = AudioMixState()
        var source = MutableSource(ToneSource(frequency: 440, frameCount: 3), state: state, timeline: CallAudioTimeline(wallClock: { 0 }))
        let loud = source.nextFrame()
        #expect(loud?.samples.contains { $0 != 0 } == true)
        state.muted.withLock { $0 = true }
        let muted = source.nextFrame()
        #expect(muted?.samples.count == 960 && muted?.samples.allSatisfy { $0 == 0 } == true)
        state.muted.withLock { $0 = false }
        #expect(source.nextFrame()?.samples.contains { $0 != 0 } == true)
        #expect(source.nextFrame() == nil, "the source's end passes through")
    }

    @Test func theSoundFileIsMixedOverTheCallAudioUntilItEnds() throws {
        // 30 ms of a constant 1000 at 48 kHz: one full frame, then half a frame padded.
        let path = try temporaryWAV(WAVFile(sampleRate: 48_000, samples: [Int16](repeating: 1000, count: 1440)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let controller = LinuxAudioEngine()
        try controller.startPlayingSoundFile(withPath: path, looping: false)
        let recording = CallRecording(keepsSamples: true)
        var sink = MixingSink(state: controller.state, recording: recording, timeline: CallAudioTimeline(wallClock: { 0 }))
        for _ in 0..<3 { try sink.consume(AudioFrame(samples: [Int16](repeating: 32_000, count: 960), sampleRate: 48_000)) }
        let samples = recording.samples.current
        #expect(samples.count == 2880)
        #expect(samples[0] == 32_767, "saturating mix")
        #expect(samples[960] == 32_767 && samples[1440] == 32_000, "padded with silence after the end")
        #expect(samples[1920] == 32_000, "over after the end")
        #expect(controller.state.soundFile.current == nil)
    }

    @Test func aLoopingSoundFileWrapsAndStopStopsIt() throws {
        let path = try temporaryWAV(WAVFile(sampleRate: 8_000, samples: [Int16](repeating: 500, count: 80)))   // 10 ms at 8 kHz
        defer { try? FileManager.default.removeItem(atPath: path) }
        let controller = LinuxAudioEngine()
        try controller.startPlayingSoundFile(withPath: path, looping: true)
        controller.soundFileQueue.sync {}   // converted off the caller's thread
        let file = try #require(controller.state.soundFile.current)
        #expect(abs(file.samples.count - 480) <= 8, "resampled to 48 kHz: \(file.samples.count)")
        for _ in 0..<10 { #expect(controller.state.nextSoundFrame()?.count == 960) }
        controller.stopPlayingSoundFile()
        #expect(controller.state.nextSoundFrame() == nil)
    }

    /// The conversion (mix-down, 44.1 -> 48 kHz) happens off the caller's thread: the
    /// call returns in a fraction of the time the whole conversion takes (which it used
    /// to spend blocking, delaying e.g. `callDidAnswer` on the main queue), the file plays
    /// once converted, and playing it again starts at once from the cache.
    @Test func startingASoundFileDoesNotWaitForItsConversion() async throws {
        let frames = 44_100 * 20
        var samples = [Int16](repeating: 0, count: frames * 2)
        for index in 0..<samples.count { samples[index] = Int16(truncatingIfNeeded: (index &* 37) % 20_000 - 10_000) }
        let path = try temporaryWAV(WAVFile(sampleRate: 44_100, channels: 2, samples: samples))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let clock = ContinuousClock()
        let whole = try clock.measure { _ = try SoundFile(path: path, looping: false) }

        let controller = LinuxAudioEngine()
        let call = try clock.measure { try controller.startPlayingSoundFile(withPath: path, looping: false) }
        #expect(call < whole / 3, "startPlayingSoundFile took \(call); the whole conversion takes \(whole)")
        for _ in 0..<1000 where controller.state.soundFile.current == nil { try await Task.sleep(for: .milliseconds(10)) }
        let playing = try #require(controller.state.soundFile.current, "it plays once converted")
        #expect(abs(playing.samples.count - 48_000 * 20) < 100, "20 s at 48 kHz mono: \(playing.samples.count)")

        controller.stopPlayingSoundFile()
        try controller.startPlayingSoundFile(withPath: path, looping: true)
        #expect(controller.state.soundFile.current?.looping == true, "a file converted before starts at once")
    }

    @Test func aStopDuringTheConversionWins() throws {
        let path = try temporaryWAV(WAVFile(sampleRate: 16_000, samples: [Int16](repeating: 300, count: 16_000)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let controller = LinuxAudioEngine()
        controller.soundFileQueue.suspend()
        try controller.startPlayingSoundFile(withPath: path, looping: false)
        controller.stopPlayingSoundFile()
        controller.soundFileQueue.resume()
        controller.soundFileQueue.sync {}
        #expect(controller.state.soundFile.current == nil, "stopped before it was converted: it does not start")
        // A newer start replaces an older one still converting.
        let other = try temporaryWAV(WAVFile(sampleRate: 48_000, samples: [Int16](repeating: 9, count: 960)))
        defer { try? FileManager.default.removeItem(atPath: other) }
        controller.soundFileQueue.suspend()
        try controller.startPlayingSoundFile(withPath: path, looping: false)
        try controller.startPlayingSoundFile(withPath: other, looping: false)
        controller.soundFileQueue.resume()
        controller.soundFileQueue.sync {}
        #expect(controller.state.soundFile.current?.samples.first == 9)
    }

    @Test func aMissingOrBadSoundFileIsAClearError() {
        let controller = LinuxAudioEngine()
        #expect(throws: ParleyClientError.self) { try controller.startPlayingSoundFile(withPath: "/nonexistent/x.wav", looping: false) }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parley-sdk-\(UUID().uuidString).wav").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data("not a wav".utf8)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: ParleyClientError.self) { try controller.startPlayingSoundFile(withPath: path, looping: true) }
        #expect(controller.state.soundFile.current == nil)
    }

    @Test func audioIsHeldUntilTheSessionIsActive() {
        let state = AudioMixState()
        let ticks = Locked<Int64>(100)
        let timeline = CallAudioTimeline(wallClock: { ticks.withLock { $0 += 1; return $0 } })
        var source = MutableSource(ToneSource(frequency: 440, frameCount: 3), state: state, timeline: timeline)
        state.sessionActive.withLock { $0 = false }
        #expect(source.nextFrame()?.samples.allSatisfy { $0 == 0 } == true)
        state.sessionActive.withLock { $0 = true }
        #expect(source.nextFrame()?.samples.contains { $0 != 0 } == true)
        let recording = CallRecording(keepsSamples: true)
        var sink = MixingSink(state: state, recording: recording, timeline: timeline)
        state.sessionActive.withLock { $0 = false }
        try? sink.consume(AudioFrame(samples: [Int16](repeating: 7, count: 960), sampleRate: 48_000))
        #expect(recording.samples.current.isEmpty && recording.framesConsumed.current == 0)
        // The capture began at the first frame taken (held or not); playout at the first
        // frame the output took, which is the recording's first sample.
        #expect(timeline.captureStarted.current == 101)
        #expect(timeline.playoutStarted.current == nil)
        state.sessionActive.withLock { $0 = true }
        try? sink.consume(AudioFrame(samples: [Int16](repeating: 7, count: 960), sampleRate: 48_000))
        try? sink.consume(AudioFrame(samples: [Int16](repeating: 7, count: 960), sampleRate: 48_000))
        #expect(timeline.playoutStarted.current == 102)
        #expect(recording.samples.current.count == 1920)
    }
}
