import ParleyMediaCore
import ParleyMediaLegCore
@testable import ParleySDKLinux
@_spi(ParleyEngines) import ParleySDKCore
import Testing

/// The SDK's call statistics carry every playout counter of the media leg, each from its
/// own source field (distinct values, so a swapped mapping fails).
@Suite struct CallStatisticsMappingTests {
    @Test func playoutCountersComeFromTheLegsStatistics() {
        var leg = MediaLegStatistics()
        leg.rtp.packetsSent = 1500
        leg.framesPlayedFromPackets = 1401
        leg.framesConcealed = 37
        leg.framesSilent = 62
        leg.playout.fecRecovered = 11
        leg.playout.underrunsConcealed = 5
        leg.playout.comfortNoiseFrames = 3
        leg.jitterBuffer.stretched = 7
        leg.jitterBuffer.discardedForDelay = 4
        leg.jitterBuffer.late = 2
        leg.jitterBuffer.targetDelayNanoseconds = 40_000_000
        leg.jitterBuffer.currentDelayNanoseconds = 38_500_000

        let statistics = LinuxCallMedia.statistics(leg)
        #expect(statistics.packetsSent == 1500)
        #expect(statistics.framesPlayed == 1401)
        #expect(statistics.framesConcealed == 37)
        #expect(statistics.framesSilent == 62)
        #expect(statistics.framesFECRecovered == 11)
        #expect(statistics.framesComfortNoise == 3)
        #expect(statistics.framesStretched == 7)
        #expect(statistics.framesShrunk == 4)
        #expect(statistics.packetsLate == 2)
        #expect(statistics.targetDelayMilliseconds == 40)
        #expect(statistics.currentDelayMilliseconds == 38.5)
    }

    @Test func theInitializerKeepsItsOldFormWithZeroCounters() {
        let statistics = ParleyCallStatistics(packetsSent: 3, packetsReceived: 2, packetsLost: 1, jitterMilliseconds: 0.5)
        #expect(statistics.framesPlayed == 0 && statistics.framesConcealed == 0 && statistics.targetDelayMilliseconds == 0)
        #expect(ParleyCallStatistics() == ParleyCallStatistics(framesPlayed: 0))
    }
}
