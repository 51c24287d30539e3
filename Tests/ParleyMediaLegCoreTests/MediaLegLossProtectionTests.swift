import ParleyMediaCore
@testable import ParleyMediaLegCore
import Testing

/// The encoder's in-band FEC follows the loss the peer reports in RTCP: a leg pair in
/// virtual time, with the answerer's RTP to the offerer dropped at a set rate.
@Suite struct MediaLegLossProtectionTests {
    @Test("no FEC while the peer reports no loss; 5 % reported turns it on at ~5 %; back to 0 turns it off")
    func fecFollowsReportedLoss() throws {
        var harness = try MediaLegCoreTests.pair(offerer: .full, answerer: .lite, codecs: [.opus])
        // Every 20th RTP packet from the answerer to the offerer is lost while `dropping`
        // is on (RFC 7983: RTP/RTCP first byte 128-191; RTCP packet types 200-204 in byte 1).
        var dropping = false
        var counted = 0
        let offererAddress = harness.offererAddress
        harness.filter = { bytes, _, to in
            guard to == offererAddress, bytes.count > 12, (128...191).contains(bytes[0]), !(192...223).contains(bytes[1]) else { return bytes }
            counted += 1
            return dropping && counted % 20 == 0 ? nil : bytes
        }
        try harness.negotiate()
        try harness.startBoth()
        harness.run(for: .seconds(1))
        #expect(harness.answerer.state == .connected)
        // Clean: several receiver reports of 0 % (one every 2.5-7.5 s).
        harness.run(for: .seconds(20), audio: true)
        #expect(harness.answerer.statistics.rtp.outboundFractionLost == 0)
        #expect(harness.answerer.statistics.rtcpReportsReceived >= 3)
        #expect(!harness.answerer.lossProtection.inbandFEC)
        #expect(harness.answerer.lossProtection.expectedLossPercent == 0)
        // 5 % loss.
        dropping = true
        harness.run(for: .seconds(30), audio: true)
        #expect((harness.answerer.statistics.rtp.outboundFractionLost ?? 0) > 0.03)
        #expect(harness.answerer.lossProtection.inbandFEC)
        #expect((4...6).contains(harness.answerer.lossProtection.expectedLossPercent), "\(harness.answerer.lossProtection)")
        // The offerer saw no loss of its own stream: no FEC there.
        #expect(!harness.offerer.lossProtection.inbandFEC)
        // Clean again: off after the hysteresis (four or so reports).
        dropping = false
        harness.run(for: .seconds(40), audio: true)
        #expect(!harness.answerer.lossProtection.inbandFEC, "\(harness.answerer.lossProtection)")
    }

    @Test("opusInbandFEC = false keeps FEC off whatever the peer reports")
    func fecNotAllowed() throws {
        var offerer = MediaLegConfiguration(iceMode: .full, certificate: try #require(MediaLegCoreTests.certificates.0))
        var answerer = MediaLegConfiguration(iceMode: .lite, certificate: try #require(MediaLegCoreTests.certificates.1))
        offerer.codecs = [.opus]
        answerer.codecs = [.opus]
        answerer.opusInbandFEC = false
        var harness = try LegPairHarness(offererConfiguration: offerer, answererConfiguration: answerer)
        var counted = 0
        let offererAddress = harness.offererAddress
        harness.filter = { bytes, _, to in
            guard to == offererAddress, bytes.count > 12, (128...191).contains(bytes[0]), !(192...223).contains(bytes[1]) else { return bytes }
            counted += 1
            return counted % 10 == 0 ? nil : bytes
        }
        try harness.negotiate()
        try harness.startBoth()
        harness.run(for: .seconds(1))
        harness.run(for: .seconds(20), audio: true)
        #expect((harness.answerer.statistics.rtp.outboundFractionLost ?? 0) > 0.05)
        #expect(!harness.answerer.lossProtection.inbandFEC)
        #expect(harness.answerer.lossProtection.expectedLossPercent == 0)
    }
}
