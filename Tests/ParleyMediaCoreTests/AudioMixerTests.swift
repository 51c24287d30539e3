#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ParleyMediaCore
import ParleyTestSupport
import Testing

/// The room's mix with synthetic frames: N-1 exactness, unity gain, the limiter's bounds,
/// talker selection (levels, the maximum, hysteresis, noise), mute and hold, bad input.
@Suite struct AudioMixerTests {
    /// A participant sending a tone (or noise) a frame at a time at the room's rate.
    struct Sender {
        var tone: ToneGenerator?
        var noise: (generator: SeededGenerator, amplitude: Int16)?
        var muted = false
        var onHold = false

        static func tone(_ frequency: Double, amplitude: Double, rate: Int) -> Sender {
            Sender(tone: ToneGenerator(frequency: frequency, amplitude: amplitude, sampleRate: rate))
        }

        /// Uniform white noise whose RMS is `dBFS`.
        static func noise(dBFS: Double, seed: UInt64) -> Sender {
            // A uniform distribution over ±A has an RMS of A / sqrt 3.
            let amplitude = 32768 * pow(10, dBFS / 20) * 3.0.squareRoot()
            return Sender(noise: (SeededGenerator(seed: seed), Int16(amplitude.rounded())))
        }

        static var silent: Sender { Sender() }

        mutating func next(_ count: Int) -> [Int16] {
            if tone != nil { return tone!.next(count: count) }
            if noise != nil {
                let amplitude = noise!.amplitude
                return (0..<count).map { _ in Int16.random(in: -amplitude...amplitude, using: &noise!.generator) }
            }
            return [Int16](repeating: 0, count: count)
        }
    }

    /// Runs `ticks` ticks; returns every tick's output.
    static func run(_ mixer: inout AudioMixer<Int>, _ senders: inout [Sender], ticks: Int) throws -> [AudioMixer<Int>.Output] {
        let frame = mixer.configuration.frameSamples
        var outputs: [AudioMixer<Int>.Output] = []
        for _ in 0..<ticks {
            var inputs: [AudioMixer<Int>.Input] = []
            for index in senders.indices {
                let samples = senders[index].next(frame)
                inputs.append(.init(id: index, samples: senders[index].muted || senders[index].onHold ? [] : samples,
                                    muted: senders[index].muted, onHold: senders[index].onHold))
            }
            outputs.append(try mixer.mix(inputs))
        }
        return outputs
    }

    static func mixer(rate: Int = 48_000, maximumTalkers: Int = 3) throws -> AudioMixer<Int> {
        var configuration = AudioMixer<Int>.Configuration()
        configuration.sampleRate = rate
        configuration.maximumTalkers = maximumTalkers
        return try AudioMixer(configuration: configuration)
    }

    static func level(_ samples: [Int16], rate: Int, at frequency: Double) -> Double {
        FrequencyAnalysis.toneLevelDBFS(samples: samples, sampleRate: rate, frequency: frequency)
    }

    static func toneLevel(amplitude: Double) -> Double {
        var tone = ToneGenerator(frequency: 1000, amplitude: amplitude, sampleRate: 48_000)
        return FrequencyAnalysis.rmsDBFS(samples: tone.next(count: 48_000))
    }

    @Test(arguments: [16_000, 48_000])
    func eachTalkerHearsEveryOtherTalkerAndNeverItself(rate: Int) throws {
        var mixer = try Self.mixer(rate: rate)
        let frequencies = [400.0, 700.0, 1100.0]
        var senders = frequencies.map { Sender.tone($0, amplitude: 0.15, rate: rate) } + [.silent, .silent]
        // Keep each talker's sent frames to check the sums exactly.
        let frame = mixer.configuration.frameSamples
        var sent: [[[Int16]]] = []
        var outputs: [AudioMixer<Int>.Output] = []
        for _ in 0..<100 {
            var frames: [[Int16]] = []
            var inputs: [AudioMixer<Int>.Input] = []
            for index in senders.indices {
                let samples = senders[index].next(frame)
                frames.append(samples)
                inputs.append(.init(id: index, samples: samples))
            }
            sent.append(frames)
            outputs.append(try mixer.mix(inputs))
        }
        // The three tones talk from the third frame on (the attack); the silent two never do.
        #expect(outputs[1].talkers.isEmpty)
        #expect(Set(outputs[2].talkers) == [0, 1, 2] && outputs[2].talkersChanged)
        #expect(outputs[3...].allSatisfy { Set($0.talkers) == [0, 1, 2] && !$0.talkersChanged })
        // Past the fade-in, every mix is the exact sum of the others (levels need no limiter).
        for tick in 3..<100 {
            let output = outputs[tick]
            for talker in 0..<3 {
                let expected = (0..<frame).map { n in
                    Int16((0..<3).filter { $0 != talker }.reduce(0) { $0 + Int(sent[tick][$1][n]) })
                }
                #expect(output.mix(for: talker) == expected)
            }
            let all = (0..<frame).map { n in Int16((0..<3).reduce(0) { $0 + Int(sent[tick][$1][n]) }) }
            #expect(output.mix(for: 3) == all && output.mix(for: 4) == all && output.shared == all)
        }
        // By frequency, over the last second: each talker's own tone is absent, the others at
        // the level they were sent; the listeners hear all three.
        let sentLevel = Self.toneLevel(amplitude: 0.15)
        for participant in 0..<5 {
            let heard = outputs[50...].flatMap { $0.mix(for: participant) }
            for (talker, frequency) in frequencies.enumerated() {
                let level = Self.level(heard, rate: rate, at: frequency)
                if talker == participant {
                    #expect(level < -90, "\(participant) hears itself at \(level) dBFS")
                } else {
                    #expect(abs(level - sentLevel) < 0.5, "\(participant) hears \(frequency) Hz at \(level) dBFS")
                }
            }
        }
        #expect(mixer.counters.framesMixed == 98 * 3 && mixer.counters.framesLimited == 0)
    }

    @Test func oneTalkerAtANormalLevelPassesAtUnityGain() throws {
        var mixer = try Self.mixer()
        var source = Sender.tone(1000, amplitude: 0.3, rate: 48_000)
        var listener = Sender.silent
        for tick in 0..<50 {
            let samples = source.next(960)
            let output = try mixer.mix([.init(id: 0, samples: samples), .init(id: 1, samples: listener.next(960))])
            if tick >= 3 {
                #expect(output.talkers == [0])
                #expect(output.shared == samples)
                #expect(output.mix(for: 1) == samples)
                #expect(output.mix(for: 0).allSatisfy { $0 == 0 })
            }
        }
        #expect(mixer.counters.framesLimited == 0)
    }

    @Test(arguments: [16_000, 48_000])
    func threeFullScaleTalkersNeverClipOrWrap(rate: Int) throws {
        var mixer = try Self.mixer(rate: rate)
        // In phase at one frequency is the worst case: the peaks add up to three times full scale.
        var senders: [Sender] = [.tone(500, amplitude: 1, rate: rate), .tone(500, amplitude: 1, rate: rate),
                                 .tone(500, amplitude: 1, rate: rate), .silent]
        let frame = mixer.configuration.frameSamples
        var frames: [[[Int16]]] = []
        var outputs: [AudioMixer<Int>.Output] = []
        for _ in 0..<100 {
            let tick = senders.indices.map { senders[$0].next(frame) }
            frames.append(tick)
            outputs.append(try mixer.mix(tick.enumerated().map { .init(id: $0.offset, samples: $0.element) }))
        }
        #expect(mixer.counters.framesLimited > 0)
        var peak = 0
        for tick in 3..<100 {
            let output = outputs[tick]
            #expect(Set(output.talkers) == [0, 1, 2])
            for n in 0..<frame {
                let sum = Int(frames[tick][0][n]) + Int(frames[tick][1][n]) + Int(frames[tick][2][n])
                let out = Int(output.shared[n])
                // Never wrapped: the output keeps the sum's sign, and never reaches full scale.
                #expect(sum == 0 || out == 0 || (sum > 0) == (out > 0), "tick \(tick) sample \(n): \(sum) -> \(out)")
                #expect(abs(out) < 32767)
                peak = max(peak, abs(out))
                for talker in 0..<3 {
                    let others = sum - Int(frames[tick][talker][n])
                    let heard = Int(output.mix(for: talker)[n])
                    #expect(others == 0 || heard == 0 || (others > 0) == (heard > 0))
                }
            }
        }
        // Past the first frames the gain holds the peak near the threshold, not far below.
        let settled = outputs[10...].flatMap(\.shared)
        let settledPeak = Int(settled.map { abs(Int($0)) }.max() ?? 0)
        #expect(settledPeak <= Int(0.7 * 32767) + 2 && settledPeak > Int(0.6 * 32767), "\(settledPeak)")
        #expect(peak < 32767)
        // Square waves at full scale, the harshest input, still come out inside 16 bits.
        var limiter = SoftLimiter()
        for sign in [1, -1, 1, 1, -1] {
            let out = limiter.process([Int32](repeating: Int32(sign * 3 * 32767), count: 960))
            #expect(out.allSatisfy { (Int($0) > 0) == (sign > 0) && abs(Int($0)) < 32767 })
        }
    }

    @Test func eachOutputStreamHasItsOwnLimiter() throws {
        var mixer = try Self.mixer()
        // A loud talker and a quiet one: the quiet talker hears the loud one turned down;
        // the loud one hears the quiet one untouched.
        var senders: [Sender] = [.tone(500, amplitude: 0.95, rate: 48_000), .tone(900, amplitude: 0.1, rate: 48_000),
                                 .tone(300, amplitude: 0.2, rate: 48_000)]
        let outputs = try Self.run(&mixer, &senders, ticks: 60)
        let loudHears = outputs[20...].flatMap { $0.mix(for: 0) }
        let quietSent = Self.toneLevel(amplitude: 0.1)
        #expect(abs(Self.level(loudHears, rate: 48_000, at: 900) - quietSent) < 0.5)
        let quietHears = outputs[20...].flatMap { $0.mix(for: 1) }
        #expect(Self.level(quietHears, rate: 48_000, at: 500) < Self.toneLevel(amplitude: 0.95) - 1)
    }

    @Test func lowLevelNoiseNeverMakesATalker() throws {
        var mixer = try Self.mixer()
        // Silence first (as a jitter buffer plays before the first packet), then steady noise
        // from far below the activation level up to just under where the floor stops rising.
        var senders: [Sender] = [.noise(dBFS: -60, seed: 1), .noise(dBFS: -50, seed: 2), .noise(dBFS: -42, seed: 3),
                                 .noise(dBFS: -38, seed: 4), .noise(dBFS: -33, seed: 5), .silent]
        var silence = senders.map { _ in Sender.silent }
        _ = try Self.run(&mixer, &silence, ticks: 25)
        let outputs = try Self.run(&mixer, &senders, ticks: 500)
        #expect(outputs.allSatisfy { $0.talkers.isEmpty }, "\(outputs.map(\.talkers).filter { !$0.isEmpty }.prefix(5))")
        #expect(mixer.counters.framesMixed == 0)
        // A talker among them is one, and only it.
        senders[5] = .tone(800, amplitude: 0.1, rate: 48_000)
        let later = try Self.run(&mixer, &senders, ticks: 100)
        #expect(later[3...].allSatisfy { $0.talkers == [5] })

        // Comfort noise (-65 dBFS, where the floor bottoms out) and then louder noise.
        var other = try Self.mixer()
        var quiet: [Sender] = [.noise(dBFS: -65, seed: 6), .noise(dBFS: -65, seed: 7)]
        _ = try Self.run(&other, &quiet, ticks: 50)
        var loud: [Sender] = [.noise(dBFS: -40, seed: 8), .noise(dBFS: -36, seed: 9)]
        let after = try Self.run(&other, &loud, ticks: 300)
        #expect(after.allSatisfy { $0.talkers.isEmpty })
    }

    @Test func wordsAreNotCutAndAFinishedTalkerLeavesAfterTheHangover() throws {
        var mixer = try Self.mixer()
        var tone = ToneGenerator(frequency: 600, amplitude: 0.2, sampleRate: 48_000)
        var talking: [Bool] = []
        // Syllables of 100 ms with 100 ms gaps for two seconds, then silence.
        for tick in 0..<200 {
            let on = tick < 100 && (tick / 5) % 2 == 0
            let samples = on ? tone.next(count: 960) : [Int16](repeating: 0, count: 960)
            talking.append(try mixer.mix([.init(id: 7, samples: samples)]).talkers == [7])
        }
        let attack = try #require(talking.firstIndex(of: true))
        #expect(attack == 2)
        // Once talking, the gaps between syllables never cut it off.
        let lastSyllableEnd = 90 + 4
        #expect(talking[attack...lastSyllableEnd].allSatisfy { $0 })
        // Then it goes after the 20-frame hangover.
        #expect(talking[(lastSyllableEnd + 1)...(lastSyllableEnd + 19)].allSatisfy { $0 })
        #expect(talking[(lastSyllableEnd + 20)...].allSatisfy { !$0 })
    }

    @Test(arguments: [2, 3])
    func theLoudestAreChosenUpToTheMaximum(maximum: Int) throws {
        var mixer = try Self.mixer(maximumTalkers: maximum)
        let amplitudes = [0.05, 0.3, 0.1, 0.4, 0.2]
        var senders = amplitudes.enumerated().map { Sender.tone(300 + 200 * Double($0.offset), amplitude: $0.element, rate: 48_000) }
        let outputs = try Self.run(&mixer, &senders, ticks: 50)
        let loudest = amplitudes.indices.sorted { amplitudes[$0] > amplitudes[$1] }.prefix(maximum)
        #expect(outputs[10...].allSatisfy { $0.talkers == Array(loudest) })
        let heard = outputs[20...].flatMap(\.shared)
        for (index, amplitude) in amplitudes.enumerated() {
            let level = Self.level(heard, rate: 48_000, at: 300 + 200 * Double(index))
            if loudest.contains(index) {
                #expect(level > Self.toneLevel(amplitude: amplitude) - 3)
            } else {
                #expect(level < -90, "\(index) is not a talker but is heard at \(level)")
            }
        }
    }

    @Test func mutedAndOnHoldParticipantsNeverContribute() throws {
        var mixer = try Self.mixer()
        var senders: [Sender] = [.tone(500, amplitude: 0.3, rate: 48_000), .tone(900, amplitude: 0.3, rate: 48_000),
                                 .tone(1300, amplitude: 0.3, rate: 48_000), .silent]
        senders[1].muted = true
        senders[2].onHold = true
        var outputs = try Self.run(&mixer, &senders, ticks: 50)
        #expect(outputs[3...].allSatisfy { $0.talkers == [0] })
        var heard = outputs[10...].flatMap { $0.mix(for: 3) }
        #expect(Self.level(heard, rate: 48_000, at: 500) > -15)
        #expect(Self.level(heard, rate: 48_000, at: 900) < -90 && Self.level(heard, rate: 48_000, at: 1300) < -90)
        // Unmuted, the tone comes back after the attack.
        senders[1].muted = false
        outputs = try Self.run(&mixer, &senders, ticks: 50)
        #expect(outputs[3...].allSatisfy { Set($0.talkers) == [0, 1] })
        heard = outputs[10...].flatMap { $0.mix(for: 3) }
        #expect(Self.level(heard, rate: 48_000, at: 900) > -15)
        // Muted while talking: gone at the next tick, with no hangover.
        senders[0].muted = true
        outputs = try Self.run(&mixer, &senders, ticks: 5)
        #expect(outputs.allSatisfy { $0.talkers == [1] })
        #expect(outputs[0].talkersChanged)
    }

    @Test func badInputIsRefusedWithAClearError() throws {
        var mixer = try Self.mixer(rate: 16_000)
        let frame = [Int16](repeating: 100, count: 320)
        #expect(throws: CodecError.self) { _ = try mixer.mix([.init(id: 1, samples: [1, 2, 3])]) }
        #expect(throws: CodecError.self) { _ = try mixer.mix([.init(id: 1, samples: frame), .init(id: 1, samples: frame)]) }
        // A muted participant's frame is not looked at.
        #expect(try mixer.mix([.init(id: 1, samples: [], muted: true)]).talkers.isEmpty)
        #expect(mixer.counters.ticks == 1)
        var configuration = AudioMixer<Int>.Configuration()
        configuration.sampleRate = 44_100
        #expect(throws: CodecError.self) { _ = try AudioMixer<Int>(configuration: configuration) }
        configuration.sampleRate = 16_000
        configuration.maximumTalkers = 0
        #expect(throws: CodecError.self) { _ = try AudioMixer<Int>(configuration: configuration) }
        configuration.maximumTalkers = 3
        configuration.maximumParticipants = 2
        var small = try AudioMixer<Int>(configuration: configuration)
        #expect(throws: CodecError.self) {
            _ = try small.mix((0..<3).map { .init(id: $0, samples: frame) })
        }
    }

    @Test func aParticipantAbsentFromATickIsForgotten() throws {
        var mixer = try Self.mixer()
        var senders: [Sender] = [.tone(500, amplitude: 0.3, rate: 48_000), .tone(900, amplitude: 0.3, rate: 48_000)]
        _ = try Self.run(&mixer, &senders, ticks: 10)
        #expect(mixer.talkers.count == 2 && mixer.voiceActivity(of: 1) != nil)
        var first = [senders[0]]
        let outputs = try Self.run(&mixer, &first, ticks: 1)
        #expect(outputs[0].talkers == [0] && outputs[0].talkersChanged)
        #expect(mixer.voiceActivity(of: 1) == nil)
        mixer.remove(0)
        #expect(mixer.talkers.isEmpty && mixer.voiceActivity(of: 0) == nil)
    }
}
