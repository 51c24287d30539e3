import ParleyMediaCore
import Testing

@Suite("OpusLossProtection")
struct OpusLossProtectionTests {
    /// RTCP's 8-bit fraction for a loss rate, as a receiver report carries it.
    static func reported(_ rate: Double) -> Double { (rate * 256).rounded(.down) / 256 }

    @Test("a clean path keeps FEC off; 5 % turns it on near 5 %; back to 0 turns it off after the hysteresis")
    func followsReports() {
        var protection = OpusLossProtection(allowed: true, maximumExpectedLossPercent: 20)
        for _ in 0..<10 { _ = protection.report(fractionLost: 0) }
        #expect(!protection.inbandFEC && protection.expectedLossPercent == 0)
        var changes = 0
        for _ in 0..<6 { if protection.report(fractionLost: Self.reported(0.05)) { changes += 1 } }
        #expect(protection.inbandFEC)
        #expect(protection.expectedLossPercent == 5, "\(protection)")
        #expect(changes >= 1 && changes <= 4)
        var reportsUntilOff = 0
        while protection.inbandFEC, reportsUntilOff < 20 {
            _ = protection.report(fractionLost: 0)
            reportsUntilOff += 1
        }
        // 4.7 % smoothed by halves: 2.3, 1.2, 0.6 (still on: above the 0.5 % off threshold), 0.3.
        #expect(reportsUntilOff == 4)
        #expect(protection.expectedLossPercent == 0)
    }

    @Test("a loss rate between the thresholds does not flap")
    func hysteresis() {
        var protection = OpusLossProtection(allowed: true, maximumExpectedLossPercent: 20)
        for _ in 0..<10 { _ = protection.report(fractionLost: 0.007) }
        #expect(!protection.inbandFEC)  // never reached the 1 % on threshold
        for _ in 0..<4 { _ = protection.report(fractionLost: 0.02) }
        #expect(protection.inbandFEC)
        var flips = 0
        for _ in 0..<20 {
            let before = protection.inbandFEC
            _ = protection.report(fractionLost: 0.007)
            if protection.inbandFEC != before { flips += 1 }
        }
        #expect(flips == 0 && protection.inbandFEC && protection.expectedLossPercent == 1)
    }

    @Test("the expected loss follows the measured loss up to the configured maximum; FEC not allowed stays off")
    func boundsAndOverride() {
        var capped = OpusLossProtection(allowed: true, maximumExpectedLossPercent: 8)
        for _ in 0..<10 { _ = capped.report(fractionLost: 0.15) }
        #expect(capped.inbandFEC && capped.expectedLossPercent == 8)
        var high = OpusLossProtection(allowed: true, maximumExpectedLossPercent: 20)
        for _ in 0..<10 { _ = high.report(fractionLost: 0.10) }
        #expect(high.expectedLossPercent == 10)
        var never = OpusLossProtection(allowed: false, maximumExpectedLossPercent: 20)
        for _ in 0..<10 { let changed = never.report(fractionLost: 0.3); #expect(!changed) }
        #expect(!never.inbandFEC && never.expectedLossPercent == 0)
        var hostile = OpusLossProtection(allowed: true, maximumExpectedLossPercent: 500)
        _ = hostile.report(fractionLost: .nan)
        _ = hostile.report(fractionLost: -3)
        #expect(hostile.smoothedLoss == 0)
        for _ in 0..<30 { _ = hostile.report(fractionLost: 7) }
        #expect(hostile.expectedLossPercent == 100)
    }
}
