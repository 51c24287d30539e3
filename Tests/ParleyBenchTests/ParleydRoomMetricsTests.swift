import Testing
@testable import ParleyBench

/// The conference figures of parleyd's `/metrics`, as MetricsRenderer writes them.
@Suite struct ParleydRoomMetricsTests {
    @Test func theConferenceFamiliesAreRead() {
        let figures = ParleydRoomMetrics(MetricsSamples(text: """
            # HELP parley_conference_rooms Conference rooms with a mixer now.
            # TYPE parley_conference_rooms gauge
            parley_conference_rooms 1
            parley_conference_participants 30
            parley_conference_talkers 3
            parley_conference_tick_lateness_p99_seconds 0.0012
            parley_conference_tick_lateness_max_seconds 0.0081
            parley_media_packets_received_total 12345

            """))
        #expect(figures.rooms == 1 && figures.participants == 30 && figures.talkers == 3)
        #expect(figures.tickLatenessP99 == 0.0012 && figures.tickLatenessMaximum == 0.0081)
    }

    @Test func absentOrOddValuesAreNil() {
        let figures = ParleydRoomMetrics(MetricsSamples(text: "parley_conference_rooms NaN\nparley_conference_talkers 2.5\n"))
        #expect(figures.rooms == nil && figures.talkers == nil && figures.participants == nil)
        #expect(figures.tickLatenessP99 == nil && figures.tickLatenessMaximum == nil)
    }
}
