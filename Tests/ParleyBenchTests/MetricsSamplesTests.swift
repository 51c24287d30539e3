import Testing
@testable import ParleyBench

/// Scrapes of parleyd's `/metrics` as `MetricsRenderer` writes them.
@Suite struct MetricsSamplesTests {
    static let scrape = """
        # HELP parley_media_packets_received_total Media packets received from devices.
        # TYPE parley_media_packets_received_total counter
        parley_media_packets_received_total 12345
        # HELP parley_sip_messages_sent_total SIP messages handed to a socket, by transport.
        # TYPE parley_sip_messages_sent_total counter
        parley_sip_messages_sent_total{transport="udp"} 40
        parley_sip_messages_sent_total{transport="tcp"} 2
        parley_sip_messages_sent_total_other 1000
        parley_media_loss_ratio 0.25
        parley_odd{reason="a b"} NaN
        parley_big +Inf

        """

    @Test func aFamilyIsTheSumOfItsSeries() {
        let samples = MetricsSamples(text: Self.scrape)
        #expect(samples.total("parley_media_packets_received_total") == 12345)
        #expect(samples.total("parley_sip_messages_sent_total") == 42)
        #expect(samples.total("parley_media_loss_ratio") == 0.25)
        #expect(samples.total("parley_absent") == 0)
    }

    @Test func labelValuesWithSpacesAndSpecialValuesParse() {
        let samples = MetricsSamples(text: Self.scrape)
        #expect(samples.series["parley_odd{reason=\"a b\"}"]?.isNaN == true)
        #expect(samples.series["parley_big"] == .infinity)
    }

    @Test func linesThatAreNotSamplesAreSkipped() {
        let samples = MetricsSamples(text: "garbage\nparley_x notanumber\n parley_y 1\n# parley_z 3\nparley_w 2\n")
        #expect(samples.series == ["parley_w": 2])
    }

    @Test func aScrapeOverTheLimitIsEmpty() {
        let text = String(repeating: "parley_x 1\n", count: MetricsSamples.maximumBytes / 11 + 1)
        #expect(MetricsSamples(text: text).series.isEmpty)
    }
}
