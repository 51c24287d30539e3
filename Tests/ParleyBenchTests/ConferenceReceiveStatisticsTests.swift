import Testing
@testable import ParleyBench

/// Loss and jitter as the conference bench counts them per participant, on made-up
/// arrivals (RFC 3550 A.1, A.3, A.8).
@Suite struct ConferenceReceiveStatisticsTests {
    /// A 12-byte RTP header (version 2, payload type 111) and a 3-byte payload.
    static func datagram(sequence: UInt16, timestamp: UInt32) -> [UInt8] {
        [0x80, 111, UInt8(sequence >> 8), UInt8(sequence & 0xff),
         UInt8(timestamp >> 24), UInt8(timestamp >> 16 & 0xff), UInt8(timestamp >> 8 & 0xff), UInt8(timestamp & 0xff),
         1, 2, 3, 4, 0xfc, 0xff, 0xfe]
    }

    static func record(_ statistics: inout ConferenceReceiveStatistics, sequence: UInt16, timestamp: UInt32, arrival: Double) -> Bool {
        datagram(sequence: sequence, timestamp: timestamp).withUnsafeBytes { statistics.record(datagram: $0, arrival: arrival) }
    }

    @Test func packetsOnTimeHaveNoLossAndNoJitter() {
        var statistics = ConferenceReceiveStatistics(clockRate: 48_000)
        for i in 0..<100 {
            // Across the sequence number's wrap, 960 ticks (20 ms) apart.
            #expect(Self.record(&statistics, sequence: 65_500 &+ UInt16(i), timestamp: UInt32(i) * 960, arrival: 5 + Double(i) * 0.02))
        }
        #expect(statistics.packets == 100)
        #expect(statistics.expected == 100)
        #expect(statistics.lost == 0)
        #expect(statistics.jitterMilliseconds < 0.05)
        #expect(abs(statistics.longestGap - 0.02) < 1e-9)
    }

    @Test func aGapInTheSequenceNumbersIsLossAndTheSilenceIsTheLongestGap() {
        var statistics = ConferenceReceiveStatistics(clockRate: 48_000)
        for i in 0..<50 where !(20..<25).contains(i) {
            _ = Self.record(&statistics, sequence: UInt16(1000 + i), timestamp: UInt32(i) * 960, arrival: Double(i) * 0.02)
        }
        #expect(statistics.packets == 45)
        #expect(statistics.expected == 50)
        #expect(statistics.lost == 5)
        #expect(abs(statistics.longestGap - 0.12) < 1e-9)
    }

    /// Every other packet 10 ms late: |D| is 10 ms at each packet, and J approaches it.
    @Test func alternatingLatenessShowsAsJitter() {
        var statistics = ConferenceReceiveStatistics(clockRate: 48_000)
        for i in 0..<400 {
            let late = i % 2 == 1 ? 0.01 : 0
            _ = Self.record(&statistics, sequence: UInt16(i), timestamp: UInt32(i) * 960, arrival: Double(i) * 0.02 + late)
        }
        #expect(abs(statistics.jitterMilliseconds - 10) < 0.5)
    }

    @Test func whatCameBetweenTwoCopiesIsCountedApart() {
        var statistics = ConferenceReceiveStatistics(clockRate: 48_000)
        for i in 0..<10 { _ = Self.record(&statistics, sequence: UInt16(i), timestamp: UInt32(i) * 960, arrival: Double(i) * 0.02) }
        let earlier = statistics
        for i in 10..<30 where i != 15 {
            _ = Self.record(&statistics, sequence: UInt16(i), timestamp: UInt32(i) * 960, arrival: Double(i) * 0.02)
        }
        let between = statistics.since(earlier)
        #expect(between.packets == 19)
        #expect(between.expected == 20)
        #expect(between.lost == 1)
    }

    @Test func datagramsThatAreNotRTPMediaAreLeftOut() {
        var statistics = ConferenceReceiveStatistics(clockRate: 48_000)
        let short: [UInt8] = [0x80, 111, 0, 1]
        var versionOne = Self.datagram(sequence: 1, timestamp: 0)
        versionOne[0] = 0x40
        var senderReport = Self.datagram(sequence: 1, timestamp: 0)
        senderReport[1] = 200
        for datagram in [short, versionOne, senderReport, []] {
            #expect(!datagram.withUnsafeBytes { statistics.record(datagram: $0, arrival: 1) })
        }
        #expect(statistics.packets == 0)
        #expect(statistics.expected == 0)
    }
}
