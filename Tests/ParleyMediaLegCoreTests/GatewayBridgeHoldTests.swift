import ParleyMediaLegCore
import Testing

/// A call on hold (`GatewayBridge.isSilenced`): neither leg's audio reaches the other, a
/// transcoding gateway keeps both streams going with silence, a relaying one sends
/// nothing, and the audio comes back on resume.
@Suite struct GatewayBridgeHoldTests {
    typealias H = GatewayHarness

    @Test func transcodingWhileHeldSendsSilenceBothWaysAndKeepsTheStreams() throws {
        let h = try H(phoneCodec: "PCMU")
        try h.run(milliseconds: 1500)
        h.bridge.isSilenced = true
        let (phoneHeard, deviceHeard, phonePackets) = (h.phone.heard.count, h.device.heard.count, h.phone.received.count)
        try h.run(milliseconds: 2000)
        // Half a second for what was in the buffers; then silence, in a stream that goes on.
        let phoneHeld = Array(h.phone.heard[(phoneHeard + 4000)...])
        let deviceHeld = Array(h.device.heard[(deviceHeard + 24000)...])
        #expect(H.level(phoneHeld, at: 1000) < -60, "\(H.level(phoneHeld, at: 1000)) dBFS of the app's tone while held")
        #expect(H.level(deviceHeld, at: 440) < -60, "\(H.level(deviceHeld, at: 440)) dBFS of the phone's tone while held")
        #expect(h.phone.received.count - phonePackets >= 95, "the phone keeps getting a stream: \(h.phone.received.count - phonePackets)")
        for leg in ["web", "sip"] {
            #expect(try #require(h.bridge.counters(of: leg)).audioLeftOutForHold >= 95)
        }
        h.bridge.isSilenced = false
        let (phoneResumed, deviceResumed) = (h.phone.heard.count, h.device.heard.count)
        try h.run(milliseconds: 1500)
        #expect(abs(H.dominant(Array(h.phone.heard[(phoneResumed + 4000)...])) - 1000) < 10)
        #expect(abs(H.dominant(Array(h.device.heard[(deviceResumed + 24000)...])) - 440) < 10)
    }

    @Test func relayingWhileHeldRelaysNothing() throws {
        let h = try H(phoneCodec: "opus")
        try h.run(milliseconds: 1500)
        #expect(h.bridge.path == .relay)
        h.bridge.isSilenced = true
        let relayed = try #require(h.bridge.counters(of: "sip")).packetsRelayed
        try h.run(milliseconds: 1000)
        let counters = try #require(h.bridge.counters(of: "sip"))
        #expect(counters.packetsRelayed == relayed)
        #expect(counters.audioLeftOutForHold >= 45, "\(counters)")
        h.bridge.isSilenced = false
        try h.run(milliseconds: 500)
        #expect(try #require(h.bridge.counters(of: "sip")).packetsRelayed > relayed)
    }
}
