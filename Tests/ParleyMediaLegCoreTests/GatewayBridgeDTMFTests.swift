import ParleyMediaCore
import ParleyMediaLegCore
import ParleyRTP
import Testing

/// RFC 4733 through the gateway (`GatewayHarness`): events from either side re-sent on the
/// other with its payload type and clock, the marker and end bits as the RFC says, the
/// tone's audio left out meanwhile; digits the app sends on a leg; digits reported.
@Suite struct GatewayBridgeDTMFTests {
    typealias H = GatewayHarness

    /// The app's device presses 5 (100 ms at 48 kHz, as libwebrtc sends it: the event in
    /// place of the audio); the phone gets it at 8 kHz (or 48 kHz with Opus) on its own
    /// telephone-event payload type.
    @Test(arguments: ["PCMU", "opus"])
    func anEventFromTheAppReachesThePhoneInItsClock(codec: String) throws {
        let h = try H(phoneCodec: codec)
        try h.run(milliseconds: 1000)
        let accepted = h.device.events.enqueueDigits([5])
        #expect(accepted)
        try h.run(milliseconds: 1000)

        let rate: UInt32 = codec == "PCMU" ? 8000 : 48_000
        let unit = rate / 50
        let events = h.phone.eventPackets
        #expect(Set(events.map(\.packet.timestamp)).count == 1, "one event, one timestamp")
        #expect(events.allSatisfy { $0.event.event == 5 && $0.packet.payloadType == 101 })
        #expect(events.first?.packet.marker == true && events.dropFirst().allSatisfy { !$0.packet.marker })
        // The duration grows a tick at a time, in the phone's clock; the end, with the whole
        // 100 ms, comes three times, 20 ms apart (RFC 4733 §2.5.1.4).
        let updates = events.filter { !$0.event.isEnd }
        let ends = events.filter(\.event.isEnd)
        #expect(updates.count >= 3 && ends.count == 3 && events.suffix(3).allSatisfy(\.event.isEnd), "\(events.map(\.event))")
        for (index, update) in updates.enumerated() { #expect(UInt32(update.event.duration) == UInt32(index + 1) * unit) }
        #expect(ends.allSatisfy { UInt32($0.event.duration) == 5 * unit }, "\(ends.map(\.event.duration))")
        #expect(zip(ends, ends.dropFirst()).allSatisfy { $1.at - $0.at == 20 })

        // No audio while the event is on the wire; the first audio after it is marked and
        // starts after the event's duration.
        let all = h.phone.received
        let first = try #require(all.firstIndex { $0.packet.payloadType == 101 })
        let last = try #require(all.lastIndex { $0.packet.payloadType == 101 })
        #expect(all[first...last].allSatisfy { $0.packet.payloadType == 101 })
        let before = all[first - 1].packet, after = all[last + 1].packet
        let eventTimestamp = all[first].packet.timestamp
        #expect(before.timestamp &+ unit == eventTimestamp, "the event starts where the next frame would have")
        #expect(after.marker)
        #expect(Int32(bitPattern: after.timestamp &- eventTimestamp) >= Int32(5 * unit))
        // One stream: numbers increase without repeats (and, transcoding, without gaps).
        for (a, b) in zip(all, all.dropFirst()) {
            let step = b.packet.sequenceNumber &- a.packet.sequenceNumber
            if codec == "PCMU" { #expect(step == 1) } else { #expect(step >= 1 && step < 20) }
        }
        #expect(Set(all.map(\.packet.ssrc)).count == 1)

        // Reported once as it began and once as it ended, in the app leg's clock.
        let reported = h.reportedByTopology()
        #expect(reported.map(\.leg) == ["web", "web"])
        #expect(reported.map(\.event.key) == ["5", "5"])
        #expect(reported.map(\.event.isEnd) == [false, true])
        #expect(reported.last?.event.duration == 4800)
        // The event's packets took sequence numbers of the app's stream: counted as
        // received, not as lost.
        let web = try #require(h.serverStatistics("web"))
        #expect(web.rtp.inboundCumulativeLost == 0, "\(web.rtp)")
        let counters = try #require(h.bridge.counters(of: "sip"))
        #expect(counters.eventsForwarded == 1 && counters.eventsNotForwarded == 0)
        #expect(counters.telephoneEventPacketsSent == UInt64(events.count))
        // Transcoding, the app's audio slots during the event went to it; relaying, the
        // app sent none then (nor do the numbers its event packets used reach the phone:
        // they are a gap in the relayed stream).
        if codec == "PCMU" { #expect(counters.audioLeftOutForEvents >= 8) }
        #expect(abs(H.dominant(h.phone.heard) - 1000) < 10, "the tone goes on after the event")
    }

    /// The phone presses # (100 ms at its clock); the app's device gets it at 48 kHz on the
    /// telephone-event payload type its leg negotiated.
    @Test(arguments: ["PCMU", "PCMA", "opus"])
    func anEventFromThePhoneReachesTheAppAt48kHz(codec: String) throws {
        let h = try H(phoneCodec: codec)
        try h.run(milliseconds: 1000)
        let accepted = h.phone.events.enqueueDigits([11])
        #expect(accepted)
        try h.run(milliseconds: 1000)

        let reported = h.device.reportedEvents
        #expect(reported.map(\.event.key) == ["#", "#"])
        #expect(reported.map(\.event.isEnd) == [false, true])
        #expect(reported.first?.event.duration == 960, "the first packet says one 20 ms tick at 48 kHz")
        #expect(reported.last?.event.duration == 4800, "100 ms at 48 kHz")
        #expect(reported.first?.timestamp == reported.last?.timestamp)

        let eventType = try #require(H.payloadType(of: "telephone-event/48000", in: h.webAnswer))
        let arrivals = h.device.arrivals
        let events = arrivals.filter { $0.payloadType == eventType }
        #expect(events.count >= 4, "updates, then three ends")
        #expect(Set(events.map(\.timestamp)).count == 1)
        #expect(events.first?.marker == true && events.dropFirst().allSatisfy { !$0.marker })
        let first = try #require(arrivals.firstIndex { $0.payloadType == eventType })
        let last = try #require(arrivals.lastIndex { $0.payloadType == eventType })
        #expect(arrivals[first...last].allSatisfy { $0.payloadType == eventType }, "no audio while the event is on")
        #expect(arrivals[last + 1].marker)
        #expect(Int32(bitPattern: arrivals[last + 1].timestamp &- events[0].timestamp) >= 4800)

        #expect(h.reportedByTopology().map(\.leg) == ["sip", "sip"])
        #expect(h.bridge.counters(of: "web")?.eventsForwarded == 1)
        #expect(abs(H.dominant(h.device.heard) - 440) < 10)
    }

    @Test func theAppsDigitsArePacedOnTheSIPLeg() throws {
        let h = try H()
        try h.run(milliseconds: 600)
        for refused in ["", "1x", "a", "12 3", String(repeating: "1", count: 65)] {
            #expect(!h.bridge.sendDTMF(refused, on: "sip"), "\(refused)")
        }
        #expect(!h.bridge.sendDTMF("1", on: "nobody"))
        #expect(h.bridge.sendDTMF("1#", on: "sip"))
        try h.run(milliseconds: 1000)

        let events = h.phone.eventPackets
        let byTimestamp = Dictionary(grouping: events, by: \.packet.timestamp)
        #expect(byTimestamp.count == 2)
        let starts = byTimestamp.keys.sorted()
        guard starts.count == 2 else { return }
        for (start, code) in zip(starts, [UInt8(1), 11]) {
            let run = try #require(byTimestamp[start])
            #expect(run.map(\.event.event).allSatisfy { $0 == code })
            #expect(run.map(\.packet.marker) == [true] + Array(repeating: false, count: 7))
            #expect(run.map(\.event.duration) == [160, 320, 480, 640, 800, 800, 800, 800])
            #expect(run.map(\.event.isEnd) == [false, false, false, false, false, true, true, true])
            #expect(zip(run, run.dropFirst()).allSatisfy { $1.at - $0.at == 20 }, "a packet a tick")
        }
        // The second tone begins 80 ms after the first ended (70 ms rounded up to a tick).
        #expect(starts[1] - starts[0] == (5 + 4) * 160)
        #expect(h.bridge.counters(of: "sip")?.digitsQueued == 2)
        #expect(h.bridge.counters(of: "sip")?.telephoneEventPacketsSent == 16)
        // Digits the gateway sends are not digits it received.
        #expect(h.reportedByTopology().isEmpty)
    }

    @Test func theAppsDigitsOnTheWebRTCLegUseItsClock() throws {
        let h = try H()
        try h.run(milliseconds: 600)
        #expect(h.bridge.sendDTMF("*", on: "web"))
        try h.run(milliseconds: 500)
        #expect(h.device.reportedEvents.map(\.event.key) == ["*", "*"])
        #expect(h.device.reportedEvents.map(\.event.duration) == [960, 4800])
    }

    @Test func anEventTheOtherLegCannotCarryIsCountedAndItsAudioPasses() throws {
        let h = try H()
        try h.run(milliseconds: 600)
        // Event 16 (flash) is no DTMF key: reported, not re-sent.
        let phone = h.phone
        var accepted = phone.events.forwardBegin(event: 16, volume: 10, key: 1)
        #expect(accepted)
        accepted = phone.events.forwardEnd(event: 16, volume: 10, key: 1, duration: 800)
        #expect(accepted)
        try h.run(milliseconds: 500)
        #expect(h.reportedByTopology().map(\.event.event) == [16, 16])
        #expect(h.device.reportedEvents.isEmpty)
        #expect(h.bridge.counters(of: "web")?.eventsNotForwarded == 1)
        #expect(h.bridge.counters(of: "web")?.eventsForwarded == 0)
    }
}
