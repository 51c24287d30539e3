import ParleyMediaCore
import ParleyMediaLegCore
import Testing

/// What a recorded call's topology hands its `CallRecordingSink` (docs/backend.md,
/// "Recording"), on a virtual clock: a gateway's two directions per tick, the caller's on
/// the left, whether its codecs were transcoded or would have been relayed; a relayed call
/// turned to transcoding when a recording starts mid-call; nothing after the stop; and a
/// server-answered call's caller beside the prompts played to it.
@Suite struct TopologyRecordingTests {
    typealias H = GatewayHarness

    /// Collects what a topology records, checking each tick is two whole 20 ms frames.
    final class CollectingSink: CallRecordingSink {
        var caller: [Int16] = []
        var other: [Int16] = []
        var ticks = 0
        var malformedTicks = 0

        func record(caller: [Int16], other: [Int16]) {
            ticks += 1
            if caller.count != AudioPayloadCodec.frameSamples || other.count != AudioPayloadCodec.frameSamples { malformedTicks += 1 }
            self.caller += caller
            self.other += other
        }
    }

    static func dominant(_ samples: [Int16]) -> Double {
        FrequencyAnalysis.dominantFrequency(samples: samples, sampleRate: AudioPayloadCodec.interfaceRate) ?? 0
    }

    /// The phone (the SIP leg, 440 Hz) as the caller, the app (1000 Hz) on the other side,
    /// through PCMU: one tick recorded per tick run once both legs flow, each direction
    /// carrying its own tone, and the call's own audio unchanged.
    @Test func aTranscodedCallRecordsEachDirectionOnItsOwnSide() throws {
        let h = try H(phoneCodec: "PCMU")
        let sink = CollectingSink()
        h.bridge.startRecording(caller: "sip", into: sink)
        #expect(h.bridge.isRecording)
        try h.run(milliseconds: 3000)
        #expect(h.bridge.path == .transcode)
        #expect(sink.malformedTicks == 0)
        #expect(sink.ticks >= 140 && UInt64(sink.ticks) == h.bridge.recordedTicks, "\(sink.ticks) of \(h.bridge.ticks) ticks")
        // The last two seconds: past the jitter buffers' start.
        let tail = 2 * AudioPayloadCodec.interfaceRate
        #expect(abs(Self.dominant(Array(sink.caller.suffix(tail))) - 440) < 10, "\(Self.dominant(Array(sink.caller.suffix(tail))))")
        #expect(abs(Self.dominant(Array(sink.other.suffix(tail))) - 1000) < 10, "\(Self.dominant(Array(sink.other.suffix(tail))))")
        #expect(abs(H.dominant(h.phone.heard) - 1000) < 10)
        #expect(abs(H.dominant(h.device.heard) - 440) < 10)
    }

    /// Both legs on Opus would relay; recorded from the start, the call is transcoded
    /// instead (so every tick is decoded), and both tones still cross.
    @Test func aRecordedCallWithMatchingCodecsIsTranscoded() throws {
        let h = try H(phoneCodec: "opus")
        let sink = CollectingSink()
        h.bridge.startRecording(caller: "web", into: sink)
        try h.run(milliseconds: 3000)
        #expect(h.bridge.path == .transcode)
        #expect(h.bridge.counters(of: "sip")?.packetsRelayed == 0)
        let tail = 2 * AudioPayloadCodec.interfaceRate
        #expect(abs(Self.dominant(Array(sink.caller.suffix(tail))) - 1000) < 10)
        #expect(abs(Self.dominant(Array(sink.other.suffix(tail))) - 440) < 10)
        #expect(abs(H.dominant(h.phone.heard) - 1000) < 10)
        #expect(abs(H.dominant(h.device.heard) - 440) < 10)
    }

    /// A relayed call recorded mid-call turns to transcoding (both legs decode from then
    /// on) and records both tones; after the stop nothing more is recorded and the call
    /// goes on transcoded, its tones still crossing.
    @Test func aRecordingStartedMidCallTranscodesAndStopsWhenAsked() throws {
        let h = try H(phoneCodec: "opus")
        try h.run(milliseconds: 1000)
        #expect(h.bridge.path == .relay)
        let sink = CollectingSink()
        h.bridge.startRecording(caller: "sip", into: sink)
        #expect(h.bridge.path == .transcode)
        for leg in ["web", "sip"] {
            #expect(h.bridge.withLeg(leg) { (core: inout MediaLegCore) in core.mediaMode } == .decode)
        }
        try h.run(milliseconds: 2000)
        #expect(sink.ticks >= 95 && sink.ticks <= 101, "\(sink.ticks)")
        let tail = AudioPayloadCodec.interfaceRate
        #expect(abs(Self.dominant(Array(sink.caller.suffix(tail))) - 440) < 10)
        #expect(abs(Self.dominant(Array(sink.other.suffix(tail))) - 1000) < 10)

        h.bridge.stopRecording()
        #expect(!h.bridge.isRecording)
        let recorded = sink.ticks
        let heardByPhone = h.phone.heard.count
        let heardByDevice = h.device.heard.count
        try h.run(milliseconds: 1000)
        #expect(sink.ticks == recorded)
        #expect(h.bridge.path == .transcode)
        #expect(abs(H.dominant(Array(h.phone.heard[heardByPhone...])) - 1000) < 10)
        #expect(abs(H.dominant(Array(h.device.heard[heardByDevice...])) - 440) < 10)
    }

    /// A call the server answered: the caller's 440 Hz on the left, the prompt (700 Hz,
    /// then silence once it ended) on the right; a topology without a prompt leg refuses.
    @Test func aPromptCallRecordsTheCallerAndWhatPlaysToIt() throws {
        #expect(!PromptTopology<String>().startRecording(into: CollectingSink()))
        let h = try PromptTopologyTests.Harness()
        h.phone.sending = true
        let sink = CollectingSink()
        #expect(h.topology.startRecording(into: sink))
        _ = try h.topology.enqueue(PromptTopologyTests.tone(700, milliseconds: 1000, rate: 16_000))
        try h.run(milliseconds: 2000)
        #expect(sink.malformedTicks == 0)
        #expect(sink.ticks >= 95 && sink.ticks <= 101, "\(sink.ticks)")
        let second = AudioPayloadCodec.interfaceRate
        #expect(abs(Self.dominant(Array(sink.caller.suffix(second))) - 440) < 10)
        // The prompt's second, from the first tick on; the next second is silence.
        #expect(abs(Self.dominant(Array(sink.other.prefix(second))) - 700) < 10)
        let after = Array(sink.other.suffix(second / 2))
        #expect(FrequencyAnalysis.rmsDBFS(samples: after) < -80, "\(FrequencyAnalysis.rmsDBFS(samples: after))")

        h.topology.stopRecording()
        let recorded = sink.ticks
        try h.run(milliseconds: 200)
        #expect(sink.ticks == recorded)
    }
}
