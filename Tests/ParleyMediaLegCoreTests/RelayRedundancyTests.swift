import ParleyWireCore
import ParleyICECore
import ParleyMediaCore
import ParleyMediaLegCore
import ParleyRTP
import ParleyTestSupport
import Testing

/// RED per hop through the relay (`RelayBridge`, forward mode, nothing decoded): a lossy
/// server->device hop is protected by the server leg wrapping what it forwards, and RED
/// from a device is unwrapped for a device that did not negotiate it.
@Suite struct RelayRedundancyTests {
    /// Whether `bytes` is RTP (not RTCP) going to `to`.
    static func isRTP(_ bytes: [UInt8]) -> Bool {
        bytes.count > 12 && (128...191).contains(bytes[0]) && !(192...223).contains(bytes[1])
    }

    @Test(arguments: [false, true])
    func lossyServerToDeviceHopIsProtectedByTheServerLeg(inPlace: Bool) throws {
        let h = try RelayBridgeTests.Harness(names: ["a", "b"], inPlace: inPlace)
        try h.bridge.join("a")
        try h.bridge.join("b")
        var random = SeededGenerator(seed: 11)
        var lost = 0
        let deviceB = h.devices["b"]!.address
        h.lose = { bytes, _, to in
            guard to == deviceB, Self.isRTP(bytes), Double.random(in: 0..<1, using: &random) < 0.05 else { return false }
            lost += 1
            return true
        }
        try h.run(milliseconds: 30_000)
        // The server leg toward b wraps; a's device, on a clean hop, does not.
        let towardB = try #require(h.serverStatistics("b"))
        #expect(towardB.redPacketsSent > 300, "\(towardB.redPacketsSent)")
        #expect(h.devices["a"]!.core.statistics.redPacketsSent == 0)
        lost = 0
        let before = h.devices["b"]!.core.statistics
        h.devices["b"]!.heard = []
        try h.run(milliseconds: 20_000)
        let after = h.devices["b"]!.core.statistics
        let recovered = after.redRecovered - before.redRecovered
        let concealed = after.framesConcealed - before.framesConcealed
        #expect(lost > 20)
        #expect(Double(recovered) >= 0.85 * Double(lost), "recovered \(recovered) of \(lost)")
        #expect(concealed <= 10, "concealed \(concealed) of 1000 frames with \(lost) lost")
        #expect(abs(h.dominant("b") - 400) < 10)
    }

    @Test(arguments: [false, true])
    func redFromADeviceReachesAPlainDeviceUnwrapped(inPlace: Bool) throws {
        // b did not negotiate RED; a did, and its hop to the server loses 5 %.
        let h = try RelayBridgeTests.Harness(names: ["a", "b"], inPlace: inPlace, plainDevices: ["b"])
        try h.bridge.join("a")
        try h.bridge.join("b")
        var random = SeededGenerator(seed: 12)
        var lost = 0
        let serverA = h.serverAddresses["a"]!
        h.lose = { bytes, _, to in
            guard to == serverA, Self.isRTP(bytes), Double.random(in: 0..<1, using: &random) < 0.05 else { return false }
            lost += 1
            return true
        }
        try h.run(milliseconds: 30_000)
        #expect(h.devices["a"]!.core.statistics.redPacketsSent > 300)
        let serverLegA = try #require(h.serverStatistics("a"))
        #expect(serverLegA.redRecovered > 0)
        #expect(h.serverStatistics("b")?.redPacketsSent == 0)
        // b decodes plain Opus only: nothing it could not read, and few gaps.
        let b = h.devices["b"]!.core.statistics
        #expect(b.dropped[.unknownPayloadType, default: 0] == 0)
        #expect(b.redRecovered == 0)
        #expect(Double(serverLegA.redRecovered) >= 0.7 * Double(lost), "\(serverLegA.redRecovered) of \(lost)")
        #expect(abs(h.dominant("b") - 400) < 10)
    }
}
