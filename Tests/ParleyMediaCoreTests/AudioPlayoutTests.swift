import Foundation
import ParleyMediaCore
import Testing

private let ms = JitterBufferSimulation.millisecond

/// A talk spurt through a jitter buffer and `AudioPlayout` in virtual time: every missing
/// frame between the spurt's first and last packet is concealed, never digital silence.
@Suite("AudioPlayout")
struct AudioPlayoutTests {
    /// A voiced, never silent signal: a 180 Hz fundamental with harmonics, its level swinging
    /// at 4 Hz between 0.15 and 0.45 of full scale, as syllables do.
    static func speechLike(frames: Int) -> [[Int16]] {
        (0..<frames).map { frame in
            (0..<960).map { i in
                let t = Double(frame * 960 + i) / 48_000
                let envelope = 0.3 + 0.15 * sin(2 * .pi * 4 * t)
                let voice = 0.6 * sin(2 * .pi * 180 * t) + 0.3 * sin(2 * .pi * 360 * t) + 0.1 * sin(2 * .pi * 720 * t)
                return Int16(envelope * voice * 32_767)
            }
        }
    }

    struct Run {
        var ticks: [AudioPlayout.Tick] = []
        var statistics = AudioPlayout.Statistics()
        var lossesWithNextPacket = 0
        var buffer: JitterBuffer
    }

    /// Sends `frames` encoded with `codecName` every 20 ms (those in `lost` never arrive),
    /// `networkDelay` late, and plays them on ticks `phase` after the sender's clock, decoded
    /// at `audioRate`.
    static func run(codecName: String, frames: Int, lost: Set<Int>, networkDelay: UInt64, phase: UInt64,
                    configuration: JitterBuffer.Configuration = .init(), extraTicks: Int = 20,
                    audioRate: Int = 48_000) throws -> Run {
        let encoder = try #require(try AudioPayloadCodec(name: codecName, opus: .init(inbandFEC: true, expectedLossPercent: 10)))
        let decoder = try #require(try AudioPayloadCodec(name: codecName, audioRate: audioRate))
        let payloads = try speechLike(frames: frames).map { try encoder.encode($0) }
        let start: UInt64 = 1_000 * ms
        var buffer = JitterBuffer(configuration: configuration)
        var player = AudioPlayout(codec: decoder, noiseSeed: 7)
        var run = Run(buffer: buffer)
        var next = 0
        for tick in 0..<(frames + extraTicks) {
            let now = start + phase + UInt64(tick) * 20 * ms
            while next < frames, start + UInt64(next) * 20 * ms + networkDelay <= now {
                if !lost.contains(next) {
                    buffer.push(payload: payloads[next][...], sequenceNumber: UInt16(next), timestamp: UInt32(next) * encoder.timestampStep,
                                ssrc: 1, marker: next == 0, now: start + UInt64(next) * 20 * ms + networkDelay)
                }
                next += 1
            }
            run.ticks.append(player.tick(from: &buffer, now: now))
        }
        run.statistics = player.statistics
        run.buffer = buffer
        return run
    }

    /// Ticks from the first packet played to the last, as (index, tick).
    static func spurt(_ run: Run) -> ArraySlice<AudioPlayout.Tick> {
        guard let first = run.ticks.firstIndex(where: { $0.kind == .packet }),
              let last = run.ticks.lastIndex(where: { $0.kind == .packet }) else { return [] }
        return run.ticks[first...last]
    }

    @Test("Opus: losses at every tick phase, the empty-buffer case included, never play an all-zero frame")
    func opusEveryPhase() throws {
        // Isolated losses at varied positions and a run of three.
        let lost: Set<Int> = [7, 19, 33, 34, 35, 52, 70, 71, 88, 101, 117, 130]
        var underrunsConcealed: UInt64 = 0
        var phases = (0..<20).map { UInt64($0) * ms }
        phases.append(ms / 2)
        for phase in phases {
            let run = try Self.run(codecName: "opus", frames: 150, lost: lost, networkDelay: 5 * ms, phase: phase)
            let spurt = Self.spurt(run)
            #expect(spurt.count >= 150, "phase \(phase) ns")
            let silent = spurt.filter { $0.samples.allSatisfy { $0 == 0 } }.count
            #expect(silent == 0, "phase \(phase) ns: \(silent) all-zero frames inside the spurt; \(run.statistics)")
            #expect(spurt.allSatisfy { $0.kind != .silent }, "phase \(phase) ns")
            #expect(run.ticks.allSatisfy { $0.samples.count == 960 })
            underrunsConcealed += run.statistics.underrunsConcealed
        }
        // The buffer was empty at some lost slots (5 ms of network delay, 20 ms target):
        // those were concealed rather than silent.
        #expect(underrunsConcealed > 0)
    }

    @Test("Opus: a lost packet is rebuilt from the next packet's in-band FEC when that is buffered")
    func opusFEC() throws {
        var configuration = JitterBuffer.Configuration()
        configuration.minimumDelay = .milliseconds(60)
        let lost: Set<Int> = [20, 40, 41, 60, 80, 100, 120]
        let run = try Self.run(codecName: "opus", frames: 150, lost: lost, networkDelay: 5 * ms, phase: 3 * ms,
                               configuration: configuration)
        // Every loss is seen with its successor buffered (60 ms of buffer), so each is
        // rebuilt from FEC except the first of the pair 40-41 (41 is missing too).
        #expect(run.buffer.statistics.lost == 7)
        #expect(run.statistics.fecRecovered == 6, "\(run.statistics)")
        #expect(Self.spurt(run).allSatisfy { !$0.samples.allSatisfy { $0 == 0 } })
    }

    @Test("decoded at 16 kHz: 320-sample ticks, losses rebuilt from FEC or concealed, none all-zero",
          arguments: ["opus", "PCMU"])
    func playoutAtSixteenKilohertz(codecName: String) throws {
        var configuration = JitterBuffer.Configuration()
        configuration.minimumDelay = .milliseconds(60)
        configuration.clockRate = codecName == "opus" ? 48_000 : 8_000
        let lost: Set<Int> = [20, 40, 41, 60, 80, 100, 120]
        let run = try Self.run(codecName: codecName, frames: 150, lost: lost, networkDelay: 5 * ms, phase: 3 * ms,
                               configuration: configuration, audioRate: 16_000)
        #expect(run.ticks.allSatisfy { $0.samples.count == 320 })
        let spurt = Self.spurt(run)
        #expect(spurt.count >= 150)
        #expect(spurt.allSatisfy { !$0.samples.allSatisfy { $0 == 0 } })
        #expect(run.buffer.statistics.lost == 7)
        if codecName == "opus" { #expect(run.statistics.fecRecovered == 6, "\(run.statistics)") }
        // The speech-like signal's 180 Hz fundamental comes through at 16 kHz, as at 48 kHz.
        let played = spurt.suffix(40).flatMap(\.samples)
        #expect(FrequencyAnalysis.dominantFrequency(samples: played, sampleRate: 16_000, range: 100...1000)
            .map { abs($0 - 180) < 10 } == true)
    }

    @Test("G.711: a loss run longer than its 60 ms of faded repeats plays comfort noise, not silence")
    func g711ComfortNoise() throws {
        let lost = Set(50..<58)
        let run = try Self.run(codecName: "PCMU", frames: 100, lost: lost, networkDelay: 5 * ms, phase: 11 * ms)
        let spurt = Self.spurt(run)
        #expect(spurt.allSatisfy { !$0.samples.allSatisfy { $0 == 0 } })
        #expect(run.statistics.comfortNoiseFrames >= 4, "\(run.statistics)")
        // Comfort noise is quiet: about -60 dBFS at most.
        let noise = spurt.filter { tick in tick.kind == .concealed && tick.samples.allSatisfy { abs(Int32($0)) <= AudioPlayout.comfortNoiseAmplitude } }
        #expect(noise.count >= 4)
    }

    @Test("silence before the first packet; when the stream stops for good, concealment ends after 2 s")
    func silenceOutsideSpurts() throws {
        let run = try Self.run(codecName: "opus", frames: 30, lost: [], networkDelay: 5 * ms, phase: 0, extraTicks: 130)
        #expect(run.ticks.first?.kind == .silent)
        #expect(run.ticks.first?.samples.allSatisfy { $0 == 0 } == true)
        let afterLast = run.ticks[(try #require(run.ticks.lastIndex { $0.kind == .packet }) + 1)...]
        #expect(afterLast.prefix(AudioPlayout.maximumConcealedTicks).allSatisfy { $0.kind == .concealed })
        #expect(afterLast.dropFirst(AudioPlayout.maximumConcealedTicks).allSatisfy { $0.kind == .silent && $0.samples.allSatisfy { $0 == 0 } })
        #expect(!afterLast.dropFirst(AudioPlayout.maximumConcealedTicks).isEmpty)
    }
}
