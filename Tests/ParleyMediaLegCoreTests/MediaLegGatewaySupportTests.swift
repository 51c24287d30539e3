import ParleyMediaCore
@testable import ParleyMediaLegCore
import ParleyRTP
import Testing

/// What `MediaLegCore` offers a gateway, on two plain RTP legs (headers readable in the
/// clear): a frame left out keeps the stream's clock and marks what follows; the mode can
/// change after negotiation; a forward-mode leg numbers its own telephone events between
/// relayed packets without reusing a number.
@Suite struct MediaLegGatewaySupportTests {
    static func connectedPair() throws -> LegPairHarness {
        var harness = try PlainRTPLegTests.pair()
        try harness.negotiate()
        try harness.startBoth()
        return harness
    }

    static func packets(_ actions: [MediaLegAction]) -> [RTPPacket] {
        actions.compactMap { action in
            if case .send(let bytes, _, _) = action { try? RTPPacket(parsing: bytes) } else { nil }
        }
    }

    @Test func aSkippedFrameKeepsTheClockAndMarksTheNextPacket() throws {
        var h = try Self.connectedPair()
        let frame = AudioFrame.silence(sampleRate: 48_000)
        var sent = Self.packets(try h.offerer.sendAudio(frame, now: h.now))
        sent += Self.packets(try h.offerer.sendAudio(frame, now: h.now))
        h.offerer.skipAudioFrame()
        h.offerer.skipAudioFrame()
        #expect(h.offerer.nextRTPTimestamp == sent[0].timestamp &+ 4 * 160)
        sent += Self.packets(try h.offerer.sendAudio(frame, now: h.now))
        #expect(sent.map(\.marker) == [true, false, true])
        #expect(sent.map { $0.timestamp &- sent[0].timestamp } == [0, 160, 640])
        #expect(sent.map { $0.sequenceNumber &- sent[0].sequenceNumber } == [0, 1, 2], "nothing was sent for the skipped frames")
    }

    @Test func theModeChangesWhatReceivedMediaBecomes() throws {
        var h = try Self.connectedPair()
        #expect(h.answerer.mediaMode == .decode)
        h.answerer.setMediaMode(.forward)
        #expect(h.answerer.mediaMode == .forward && h.answerer.configuration.mediaMode == .decode)
        h.run(for: .milliseconds(200), audio: true)
        let relayed = h.events.filter { $0.side == "answerer" && { if case .receivedRTP = $0 { true } else { false } }($0.action) }
        #expect(relayed.count >= 8, "forward mode hands each packet on")
        #expect(h.answerer.statistics.framesPlayedFromPackets == 0)
        h.answerer.setMediaMode(.decode)
        h.events = []
        h.run(for: .milliseconds(400), audio: true)
        #expect(!h.events.contains { if case .receivedRTP = $0.action { true } else { false } })
        #expect(h.answerer.statistics.framesPlayedFromPackets > 0, "decode mode plays them")
    }

    @Test func aForwardModeLegNumbersItsEventsBetweenRelayedPacketsWithoutRepeats() throws {
        var h = try Self.connectedPair()
        h.offerer.setMediaMode(.forward)
        func source(_ sequence: UInt16) -> RTPPacket {
            RTPPacket(payloadType: 0, sequenceNumber: sequence, timestamp: UInt32(sequence) * 160, ssrc: 77,
                      payload: [UInt8](repeating: 0xff, count: 160)[...])
        }
        var out = Self.packets(h.offerer.relay(source(100), now: h.now))
        let event = TelephoneEvent(event: 1, duration: 160)
        out += Self.packets(h.offerer.sendTelephoneEvent(event, eventTimestamp: h.offerer.nextRTPTimestamp, marker: true, now: h.now))
        out += Self.packets(h.offerer.sendTelephoneEvent(event, eventTimestamp: out[0].timestamp &+ 160, marker: false, now: h.now))
        out += Self.packets(h.offerer.relay(source(101), now: h.now))
        out += Self.packets(h.offerer.relay(source(102), now: h.now))
        #expect(out.count == 5)
        #expect(Set(out.map(\.sequenceNumber)).count == 5, "\(out.map(\.sequenceNumber))")
        #expect(zip(out, out.dropFirst()).allSatisfy { $1.sequenceNumber &- $0.sequenceNumber == 1 })
        // The relayed packets keep the source's timing.
        #expect(out[3].timestamp &- out[0].timestamp == 160 && out[4].timestamp &- out[0].timestamp == 320)
        #expect(out[1].payloadType != out[0].payloadType)
    }
}
