import ParleyICECore
import ParleyMediaCore
import ParleyMediaLegCore
import ParleyRTP
import ParleyTestSupport
import ParleyWireCore
import Testing

/// A server-answered call's one leg (`PromptTopology`) toward a SIP phone built by hand
/// (`GatewayHarness.Phone`), on a virtual clock: clips play in order at the right length
/// whatever their rate, a looping clip loops until stopped, digits come in as events and
/// go out as RFC 4733, and the queue is bounded.
@Suite struct PromptTopologyTests {
    final class Harness {
        let start = ContinuousClock.now
        var now: ContinuousClock.Instant
        let topology = PromptTopology<String>()
        let phone: GatewayHarness.Phone
        let serverAddress = GatewayHarness.address(3000)
        var inFlight: [(due: ContinuousClock.Instant, bytes: [UInt8], from: ICETransportAddress, to: ICETransportAddress)] = []
        var actions: [MediaTopologyAction<String>] = []
        /// Each event with the millisecond it came out.
        var events: [(event: PromptTopology<String>.Event, at: Int)] = []
        var elapsed = 0

        init(codec: String = "PCMU") throws {
            now = start
            phone = try GatewayHarness.Phone(codec: codec, port: 4000)
            var configuration = MediaLegConfiguration(plainRTP: .init())
            configuration.codecs = [.pcmu, .pcma, .opus]
            configuration.mediaMode = topology.mediaMode(for: "caller")
            var core = MediaLegCore(configuration: configuration, localAddresses: [serverAddress],
                                    now: ClockReading(instant: start, unixNanoseconds: 1_800_000_000_000_000_000),
                                    random: SeededGenerator(seed: 5))
            _ = try core.answer(offer: phone.offer)
            topology.add("caller", core: core)
            topology.playInto("caller")
            perform(try topology.start("caller", now: now))
        }

        func perform(_ out: [MediaTopologyAction<String>]) {
            actions += out
            for case .send(_, let bytes, let from, let to) in out { inFlight.append((now + .milliseconds(2), bytes, from, to)) }
        }

        func run(milliseconds: Int) throws {
            for _ in 0..<milliseconds {
                now = now + .milliseconds(1)
                elapsed += 1
                while let index = inFlight.firstIndex(where: { $0.due <= now }) {
                    let item = inFlight.remove(at: index)
                    if item.to == serverAddress {
                        perform(topology.receive(item.bytes, from: item.from, on: "caller", local: item.to, now: now))
                    } else {
                        phone.receive(item.bytes, to: item.to, at: elapsed)
                    }
                }
                if let deadline = topology.nextDeadline(of: "caller"), deadline <= now { perform(topology.handleTimeout(of: "caller", now: now)) }
                if let deadline = topology.nextTopologyDeadline, deadline <= now { perform(topology.handleTopologyTimeout(now: now)) }
                events += topology.takeEvents().map { ($0, elapsed) }
                if elapsed % 20 == 0, let datagram = try phone.next() {
                    inFlight.append((now + .milliseconds(2), datagram, phone.address, serverAddress))
                }
            }
        }

        /// The phone's audio (decoded at 48 kHz), as 20 ms RMS levels in dBFS.
        var heardLevels: [Double] {
            stride(from: 0, to: phone.heard.count - 959, by: 960).map { FrequencyAnalysis.rmsDBFS(samples: Array(phone.heard[$0..<$0 + 960])) }
        }
    }

    static func tone(_ frequency: Double, milliseconds: Int, rate: Int) -> PromptTopology<String>.Clip {
        var generator = ToneGenerator(frequency: frequency, amplitude: 0.4, sampleRate: rate)
        return .init(samples: generator.next(count: rate * milliseconds / 1000), sampleRate: rate)
    }

    @Test func clipsOfEveryRatePlayInOrderForTheirLength() throws {
        let h = try Harness()
        h.phone.sending = true
        let first = try h.topology.enqueue(Self.tone(440, milliseconds: 400, rate: 8000))
        let second = try h.topology.enqueue(Self.tone(700, milliseconds: 300, rate: 16_000))
        let third = try h.topology.enqueue(Self.tone(1000, milliseconds: 200, rate: 48_000))
        let spoken = try h.topology.enqueue(Self.tone(500, milliseconds: 200, rate: 22_050))
        try h.run(milliseconds: 2000)

        #expect(h.events.map(\.event) == [.clipFinished(id: first), .clipFinished(id: second), .clipFinished(id: third),
                                          .clipFinished(id: spoken)])
        // Each ends as long after the one before as it lasts (20 ms ticks, a tick of slack).
        let ends = h.events.map(\.at)
        for (gap, expected) in zip([ends[0], ends[1] - ends[0], ends[2] - ends[1], ends[3] - ends[2]], [400, 300, 200, 200]) {
            #expect(abs(gap - expected) <= 40, "\(ends)")
        }
        #expect(h.topology.counters.clipsFinished == 4)
        #expect(h.topology.counters.clipFrames == 55)
        #expect(!h.topology.isPlaying)
        // The phone heard the tones (about -11 dBFS), then silence.
        let levels = h.heardLevels
        #expect(levels.count >= 90, "frames heard: \(levels.count)")
        #expect(levels.prefix(50).filter { $0 > -20 }.count >= 45, "\(levels.prefix(60))")
        #expect(levels.suffix(20).allSatisfy { $0 < -60 }, "\(levels.suffix(20))")
        // The first clip's 400 ms are 440 Hz, the second's 300 ms 700 Hz.
        let firstClip = Array(h.phone.heard.prefix(19_200).suffix(14_400))
        let secondClip = Array(h.phone.heard.prefix(33_600).suffix(9_600))
        let heardFirst = FrequencyAnalysis.dominantFrequency(samples: firstClip, sampleRate: 48_000) ?? 0
        let heardSecond = FrequencyAnalysis.dominantFrequency(samples: secondClip, sampleRate: 48_000) ?? 0
        #expect(abs(heardFirst - 440) < 15, "\(heardFirst)")
        #expect(abs(heardSecond - 700) < 15, "\(heardSecond)")
    }

    @Test(arguments: ["PCMU", "opus"])
    func aLoopingClipLoopsUntilStopped(codec: String) throws {
        let h = try Harness(codec: codec)
        _ = try h.topology.enqueue(Self.tone(440, milliseconds: 100, rate: 8000), loop: true)
        try h.run(milliseconds: 1000)
        #expect(h.events.isEmpty)
        #expect(h.topology.counters.clipsFinished >= 9)
        #expect(h.topology.isPlaying)
        h.topology.stopPlaying()
        let before = h.topology.counters.clipFrames
        try h.run(milliseconds: 200)
        #expect(h.topology.counters.clipFrames == before)
        #expect(h.topology.counters.silenceFrames >= 9)
    }

    @Test func digitsComeInAsEventsAndGoOutAsRFC4733() throws {
        let h = try Harness()
        try h.run(milliseconds: 200)
        let pressed = h.phone.events.enqueueDigits([5])
        #expect(pressed)
        try h.run(milliseconds: 400)
        let keys = h.actions.compactMap { action -> Character? in
            if case .receivedTelephoneEvent("caller", let event, _) = action, !event.isEnd { event.key } else { nil }
        }
        #expect(keys == ["5"])

        #expect(h.topology.sendDTMF("1#"))
        #expect(!h.topology.sendDTMF("x"))
        try h.run(milliseconds: 600)
        let sent = h.phone.eventPackets
        #expect(Set(sent.map(\.event.event)) == [1, 11])
        #expect(sent.filter(\.event.isEnd).count == 6)
        #expect(h.topology.counters.telephoneEventPackets == UInt64(sent.count))
    }

    @Test func theQueueIsBounded() throws {
        var configuration = PromptTopology<String>.Configuration()
        configuration.maximumQueuedClips = 3
        configuration.maximumQueuedSamples = 16_000
        let topology = PromptTopology<String>(configuration: configuration)
        _ = try topology.enqueue(Self.tone(440, milliseconds: 1000, rate: 8000))
        #expect(throws: PromptTopology<String>.EnqueueError.self) {
            _ = try topology.enqueue(Self.tone(440, milliseconds: 1001, rate: 8000))
        }
        _ = try topology.enqueue(Self.tone(440, milliseconds: 10, rate: 8000))
        _ = try topology.enqueue(Self.tone(440, milliseconds: 10, rate: 8000))
        #expect(throws: PromptTopology<String>.EnqueueError.self) {
            _ = try topology.enqueue(Self.tone(440, milliseconds: 10, rate: 8000))
        }
        #expect(topology.queuedClipCount == 3)
        #expect(throws: PromptTopology<String>.EnqueueError.unsupportedRate(7)) {
            _ = try PromptTopology<String>().enqueue(.init(samples: [1, 2], sampleRate: 7))
        }
        topology.stopPlaying()
        #expect(topology.queuedClipCount == 0)
        _ = try topology.enqueue(Self.tone(440, milliseconds: 1000, rate: 8000))
    }

    @Test func joinedInTheGatewayThePromptClockStops() throws {
        let h = try Harness()
        _ = try h.topology.enqueue(Self.tone(440, milliseconds: 1000, rate: 8000))
        try h.run(milliseconds: 200)
        let frames = h.topology.counters.clipFrames
        #expect(frames >= 8)
        try h.topology.join("caller")
        try h.run(milliseconds: 200)
        #expect(h.topology.counters.clipFrames == frames)
    }
}
