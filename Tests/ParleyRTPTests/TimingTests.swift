import Testing
import ParleyRTP

@Suite("Jitter (RFC 3550 A.8) and NTP timestamps (RFC 3550 §4, §6.4.1)")
struct TimingTests {
    @Test("RFC 3550 A.8 constant transit time gives zero jitter")
    func constantTransit() {
        var estimator = RTPJitterEstimator()
        for i: UInt32 in 0..<50 { estimator.update(arrivalTime: 1000 + i * 160, rtpTimestamp: i * 160) }
        #expect(estimator.jitter == 0)
    }

    @Test("RFC 3550 A.8 worked steps: J += |D| - (J + 8) / 16, with J scaled by 16")
    func workedSteps() {
        var estimator = RTPJitterEstimator()
        estimator.update(arrivalTime: 0, rtpTimestamp: 0)  // transit 0, no D yet
        #expect(estimator.jitterTimes16 == 0)
        estimator.update(arrivalTime: 180, rtpTimestamp: 160)  // transit 20, D = 20
        #expect(estimator.jitterTimes16 == 20)  // 0 + 20 - 0: J = 1.25
        #expect(estimator.jitter == 1)
        estimator.update(arrivalTime: 340, rtpTimestamp: 320)  // transit 20, D = 0
        #expect(estimator.jitterTimes16 == 19)  // 20 + 0 - 1: J = 1.19
        estimator.update(arrivalTime: 520, rtpTimestamp: 480)  // transit 40, D = 20
        #expect(estimator.jitterTimes16 == 38)  // 19 + 20 - 1: J = 2.38
        #expect(estimator.jitter == 2)
        estimator.update(arrivalTime: 640, rtpTimestamp: 640)  // transit 0, D = -40
        #expect(estimator.jitterTimes16 == 76)  // 38 + 40 - 2: J = 4.75
        #expect(estimator.jitter == 4)
    }

    @Test("RFC 3550 A.8 converges to the mean |D|")
    func convergence() {
        var estimator = RTPJitterEstimator()
        for i: UInt32 in 0..<400 {
            let delay: UInt32 = i % 2 == 0 ? 0 : 160  // alternating: |D| = 160 every packet
            estimator.update(arrivalTime: i * 960 + delay, rtpTimestamp: i * 960)
        }
        #expect((159...160).contains(estimator.jitter))
    }

    @Test("RFC 3550 A.8 both clocks wrapping")
    func wrappingClocks() {
        var estimator = RTPJitterEstimator()
        var arrival: UInt32 = 0xffff_fe00
        var timestamp: UInt32 = 0xffff_ff00
        for i in 0..<20 {
            estimator.update(arrivalTime: arrival &+ (i % 2 == 0 ? 0 : 32), rtpTimestamp: timestamp)
            arrival &+= 160
            timestamp &+= 160
        }
        #expect((10...32).contains(estimator.jitter))
        var extreme = RTPJitterEstimator()
        for i in 0..<100 {
            extreme.update(arrivalTime: i % 2 == 0 ? 0 : 0x8000_0000, rtpTimestamp: 0)
        }
        #expect(extreme.jitter > 0x7000_0000)
    }

    @Test("RFC 3550 §4 NTP epoch and fraction")
    func ntpConversions() {
        let epoch = NTPTimestamp(unixNanoseconds: 0)
        #expect(epoch.seconds == 2_208_988_800)
        #expect(epoch.fraction == 0)
        let half = NTPTimestamp(unixNanoseconds: 1_500_000_000)
        #expect(half.seconds == 2_208_988_801)
        #expect(half.fraction == 0x8000_0000)
        #expect(half.unixNanoseconds == 1_500_000_000)
        let before = NTPTimestamp(unixNanoseconds: -250_000_000)
        #expect(before.seconds == 2_208_988_799)
        #expect(before.fraction == 0xc000_0000)
        let t = NTPTimestamp(seconds: 0x1234_5678, fraction: 0x9abc_def0)
        #expect(t.rawValue == 0x1234_5678_9abc_def0)
        #expect(t.compact == 0x5678_9abc)
        let now: Int64 = 1_700_000_000_123_456_789
        #expect(abs(NTPTimestamp(unixNanoseconds: now).unixNanoseconds - now) <= 1)
        #expect(NTPTimestamp(seconds: 1, fraction: 0) < NTPTimestamp(seconds: 1, fraction: 1))
    }

    @Test("RFC 3550 §6.4.1 round-trip example: A 0xb710:8000, LSR 0xb705:2000, DLSR 0x0005:4000 gives 6.125 s")
    func roundTripExample() {
        let rtt = NTPTimestamp.roundTripTime(arrival: 0xb710_8000, lastSenderReport: 0xb705_2000, delaySinceLastSenderReport: 0x0005_4000)
        #expect(rtt == 0x0006_2000)
        #expect(rtt.map(NTPTimestamp.nanoseconds(fromCompact:)) == 6_125_000_000)
        #expect(NTPTimestamp.roundTripTime(arrival: 0xb710_8000, lastSenderReport: 0, delaySinceLastSenderReport: 0) == nil)
        #expect(NTPTimestamp.roundTripTime(arrival: 0xb705_2000, lastSenderReport: 0xb705_2000, delaySinceLastSenderReport: 1) == nil)
        // Across the wrap of the compact clock.
        #expect(NTPTimestamp.roundTripTime(arrival: 0x0000_1000, lastSenderReport: 0xffff_f000, delaySinceLastSenderReport: 0x1000) == 0x1000)
    }

    @Test("RFC 3550 §6.4.1 DLSR in 1/65536 s")
    func delaySinceLastSR() {
        #expect(NTPTimestamp.delaySinceLastSenderReport(lastReportArrival: 0xb705_2000, now: 0xb70a_6000) == 0x0005_4000)
        #expect(NTPTimestamp.compact(fromNanoseconds: 5_250_000_000) == 0x0005_4000)
        #expect(NTPTimestamp.compact(fromNanoseconds: -1) == 0)
        #expect(NTPTimestamp.compact(fromNanoseconds: .max) == .max)
        #expect(NTPTimestamp.nanoseconds(fromCompact: 0x0000_8000) == 500_000_000)
    }
}
