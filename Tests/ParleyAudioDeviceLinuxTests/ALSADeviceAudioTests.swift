import Foundation
import ParleyAudioDeviceLinux
import ParleyMediaCore
import Testing

extension RealTimeMediaTests {
    /// Device audio without a sound card: ALSA's `file` plugin over the `null` PCM is a
    /// device whose playback lands in a raw file and whose capture comes from one. Each test
    /// defines its own device through `definitions` (nothing process-wide: no asoundrc, no
    /// environment). The device threads and the test's pull loop run on the real clock, so the
    /// suite runs in `make test`'s one-at-a-time pass (RealTimeMediaTests): beside the parallel
    /// tests, whose blocking waits can hold every cooperative thread, its 20 ms pulls were
    /// starved for seconds and a capture saw no frame at all.
    @Suite("ALSA device audio through the file plugin")
    struct ALSADeviceAudioTests {
        static let frameSamples = 960

        @Test("A 1 kHz tone given to the sink is what the device played, in order, between silence")
        func playbackRecordsTheTone() async throws {
            let directory = try Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let output = directory + "/played.raw"
            let sink = ALSAPlaybackSink(device: "parley_play", definitions: Self.fileDevice("parley_play", output: output))

            let clock = ContinuousClock()
            let started = clock.now
            try sink.start()
            #expect(sink.isRunning)
            // As the media leg's pacer does: one frame every 20 ms, for one second.
            var tone = ToneSource(frequency: 1000, amplitude: 0.5)
            let frameCount = 50
            var given: [[Int16]] = []
            for index in 0..<frameCount {
                let next = tone.nextFrame()
                let frame = try #require(next)
                given.append(frame.samples)
                try sink.consume(frame)
                try await clock.sleep(until: started + .milliseconds(20 * (index + 1)))
            }
            let drained = await Self.waitUntil(timeout: .seconds(2)) {
                let counters = sink.counters
                return counters.framesPlayed + counters.overruns == frameCount
            }
            #expect(drained)
            sink.stop()
            let elapsed = clock.now - started
            #expect(!sink.isRunning)
            #expect(sink.failure == nil)

            let counters = sink.counters
            #expect(counters.framesQueued == frameCount)
            // Scheduling decides how many were dropped (none unless the machine stalls):
            // only a loose floor here, exact bookkeeping below.
            #expect(counters.framesPlayed >= frameCount / 2)
            let recorded = try Self.readRaw(output)
            // The device got whole 20 ms frames: every one played, every silence written.
            #expect(recorded.count == (counters.framesPlayed + counters.underruns) * Self.frameSamples)
            let blocks = stride(from: 0, to: recorded.count, by: Self.frameSamples).map {
                Array(recorded[$0..<min($0 + Self.frameSamples, recorded.count)])
            }
            let audible = blocks.filter { $0.contains { $0 != 0 } }
            #expect(audible.count == counters.framesPlayed)
            // Bit-exact and in order: the played blocks are a subsequence of the given frames.
            var next = 0
            for block in audible {
                guard let found = given[next...].firstIndex(of: block) else {
                    Issue.record("a played block is not one of the given frames (after frame \(next))")
                    break
                }
                next = found + 1
            }
            let played = audible.flatMap { $0 }
            let frequency = try #require(FrequencyAnalysis.dominantFrequency(samples: played, sampleRate: 48_000))
            #expect(abs(frequency - 1000) < 2)
            // About as long as the sink ran: the device thread never runs ahead of the clock
            // by more than 1 % and its buffer (4 frames), nor falls far behind it.
            let recordedSeconds = Double(recorded.count) / 48_000
            let ranSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            #expect(recordedSeconds <= ranSeconds * 1.01 + 0.1)
            #expect(recordedSeconds >= 0.8)
        }

        @Test("A 440 Hz tone in the device's input file comes out of nextFrame, bit-exact and in order")
        func captureDeliversTheTone() async throws {
            let directory = try Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let input = directory + "/microphone.raw"
            var tone = ToneSource(frequency: 440, amplitude: 0.4, frameCount: 150)
            var known: [[Int16]] = []
            while let frame = tone.nextFrame() { known.append(frame.samples) }
            try Self.writeRaw(known.flatMap { $0 }, to: input)
            let source = ALSACaptureSource(
                device: "parley_capture",
                definitions: Self.fileDevice("parley_capture", output: directory + "/capture-copy.raw", input: input))
            #expect(source.sampleRate == 48_000 && source.channels == 1)

            try source.start()
            defer { source.stop() }
            // As the media leg's pacer does: a frame per 20 ms of the clock, catching up after
            // a late wake-up; silence when the device had none ready. Each frame is matched to
            // the 20 ms of the file it must be, until 8 came in a row (160 ms without a gap).
            let clock = ContinuousClock()
            let started = clock.now
            let deadline = started + .seconds(2)
            var matched: [Int] = []
            var run = 0, longestRun = 0, longestRunEnd = 0
            var ticks = 0
            while longestRun < 8, clock.now < deadline {
                let due = Int((clock.now - started) / .milliseconds(20))
                while ticks <= due {
                    ticks += 1
                    let next = source.nextFrame()
                    let frame = try #require(next)
                    #expect(frame.sampleRate == 48_000 && frame.channels == 1 && frame.samples.count == Self.frameSamples)
                    guard frame.samples.contains(where: { $0 != 0 }) else { continue }
                    guard let index = known[(matched.last.map { $0 + 1 } ?? 0)...].firstIndex(of: frame.samples) else {
                        Issue.record("captured frame \(matched.count) is not one of the file's 20 ms frames, or out of order")
                        return
                    }
                    run = index == (matched.last ?? -2) + 1 ? run + 1 : 1
                    matched.append(index)
                    if run > longestRun { (longestRun, longestRunEnd) = (run, index) }
                    // Each frame on its own is a 440 Hz tone: 8.8 cycles, 17 or 18 zero crossings
                    // (one either way for where the frame cuts the wave).
                    let crossings = zip(frame.samples, frame.samples.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
                    #expect((16...19).contains(crossings))
                }
                try await clock.sleep(until: started + .milliseconds(20 * ticks))
            }
            source.stop()
            #expect(source.failure == nil)
            try #require(longestRun >= 8)
            // The longest gapless stretch, as a whole, is 440 Hz to within 2 Hz.
            let stretch = known[(longestRunEnd + 1 - longestRun)...longestRunEnd].flatMap { $0 }
            let frequency = try #require(FrequencyAnalysis.dominantFrequency(samples: stretch, sampleRate: 48_000))
            #expect(abs(frequency - 440) < 2)
            let counters = source.counters
            #expect(counters.framesDelivered >= matched.count)
            // Frames still queued at stop are dropped uncounted, hence at least.
            #expect(counters.framesCaptured >= counters.framesDelivered + counters.overruns)
        }

        @Test("A device that does not exist fails to open with ALSA's own words, and nothing runs")
        func badDeviceFails() throws {
            #expect {
                _ = try ALSAPCM(device: "parley_no_such_device", direction: .playback)
            } throws: { error in
                guard let error = error as? ALSAError else { return false }
                return error.operation == "snd_pcm_open" && error.code == -ENOENT
                    && error.detail.contains("Unknown PCM parley_no_such_device")
                    && error.description.contains("parley_no_such_device")
            }
            let source = ALSACaptureSource(device: "parley_no_such_device")
            #expect(throws: ALSAError.self) { try source.start() }
            #expect(!source.isRunning)
            source.stop()
            let sink = ALSAPlaybackSink(device: "parley_no_such_device")
            #expect(throws: ALSAError.self) { try sink.start() }
            #expect(!sink.isRunning)
            // Definitions that do not parse say so.
            #expect {
                _ = try ALSAPCM(device: "x", direction: .capture, definitions: "pcm.x { type file")
            } throws: { ($0 as? ALSAError)?.operation == "snd_config_load" }
        }

        @Test("stop without start, stop twice, restart after stop, and release while running are harmless")
        func lifecycle() async throws {
            let directory = try Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let definitions = Self.fileDevice("parley_cycle", output: directory + "/cycle.raw")
            let sink = ALSAPlaybackSink(device: "parley_cycle", definitions: definitions)
            sink.stop()
            sink.stop()
            #expect(!sink.isRunning)
            try sink.start()
            try sink.start()
            #expect(sink.isRunning)
            sink.stop()
            sink.stop()
            #expect(!sink.isRunning)
            try sink.start()
            sink.stop()

            let source = ALSACaptureSource(device: "null")
            source.stop()
            #expect(source.nextFrame() == AudioFrame.silence(sampleRate: 48_000))
            try source.start()
            source.stop()
            source.stop()
            #expect(!source.isRunning && source.failure == nil)

            // Released while running: the thread does not keep it alive, and deinit stops
            // the thread and closes the device.
            var running: ALSAPlaybackSink? = ALSAPlaybackSink(device: "null")
            try running?.start()
            weak let released = running
            running = nil
            #expect(released == nil)
            var capturing: ALSACaptureSource? = ALSACaptureSource(device: "null")
            try capturing?.start()
            weak let releasedSource = capturing
            capturing = nil
            #expect(releasedSource == nil)
        }

        @Test("The sink refuses frames that are not 48 kHz mono, as WAVFileSink does")
        func sinkRefusesOtherFormats() throws {
            let sink = ALSAPlaybackSink(device: "null")
            #expect {
                try sink.consume(AudioFrame.silence(sampleRate: 8000))
            } throws: { ($0 as? CodecError)?.kind == .invalidArgument }
            #expect {
                try sink.consume(AudioFrame.silence(sampleRate: 48_000, channels: 2))
            } throws: { ($0 as? CodecError)?.kind == .invalidArgument }
            try sink.consume(AudioFrame.silence(sampleRate: 48_000))
            #expect(sink.counters.framesRejected == 2)
            #expect(sink.counters.framesQueued == 1)
        }

        @Test("The device list names ALSA's null PCM, both ways")
        func deviceList() {
            let null = ALSADevice.all().first { $0.name == "null" }
            #expect(null?.canCapture == true && null?.canPlay == true)
        }

        // MARK: Helpers

        /// A PCM named `name` that records playback into `output` and plays `input` (raw
        /// S16_LE mono) as capture, with the null PCM underneath.
        static func fileDevice(_ name: String, output: String, input: String? = nil) -> String {
            var definition = "pcm.\(name) { type file slave.pcm null file \"\(output)\" format raw"
            if let input { definition += " infile \"\(input)\"" }
            return definition + " }"
        }

        static func temporaryDirectory() throws -> String {
            let path = NSTemporaryDirectory() + "parley-alsa-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            return path
        }

        static func readRaw(_ path: String) throws -> [Int16] {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            return stride(from: 0, to: data.count - 1, by: 2).map { offset in
                Int16(bitPattern: UInt16(data[data.startIndex + offset]) | UInt16(data[data.startIndex + offset + 1]) << 8)
            }
        }

        static func writeRaw(_ samples: [Int16], to path: String) throws {
            var data = Data(capacity: samples.count * 2)
            for sample in samples {
                let bits = UInt16(bitPattern: sample)
                data.append(UInt8(bits & 0xFF))
                data.append(UInt8(bits >> 8))
            }
            try data.write(to: URL(fileURLWithPath: path))
        }

        /// Polls `condition` every 5 ms until it holds or `timeout` passes.
        static func waitUntil(timeout: Duration, _ condition: () -> Bool) async -> Bool {
            let clock = ContinuousClock()
            let deadline = clock.now + timeout
            while clock.now < deadline {
                if condition() { return true }
                try? await clock.sleep(for: .milliseconds(5))
            }
            return condition()
        }
    }
}
