import ParleyCallCore
import Testing

@testable import ParleyServer

/// The exact `/metrics` text (Prometheus exposition format 0.0.4).
@Suite struct RESTMetricsTests {
    @Test func exactExpositionText() {
        var counters = ServerMetrics.Counters()
        counters.connectionsOpen = 3
        counters.connectionsTotal = 10
        counters.authenticatedTotal = 8
        counters.authFailures = ["token_expired": 1, "token_bad_signature": 2]
        counters.callsStarted = 5
        counters.callsEstablished = 4
        counters.callsEnded = ["hungUp": 3, "error": 1]
        counters.mediaPacketsReceived = 990
        counters.mediaPacketsForwarded = 980
        counters.mediaPacketsLost = 10
        counters.mediaPacketsDropped = 2
        counters.storeWritesPending = 7
        counters.storeWriteRetries = 3
        counters.storeWritesDropped = 1
        counters.heldActions = 4
        let text = MetricsRenderer.render(
            counters: counters, liveCalls: [.ringing: 1, .established: 2, .ended: 99],
            restAuthFailures: ["bad_credentials": 4])
        let expected = """
            # HELP parley_connections_open WebSocket connections open now.
            # TYPE parley_connections_open gauge
            parley_connections_open 3
            # HELP parley_connections_total WebSocket connections opened since the server started.
            # TYPE parley_connections_total counter
            parley_connections_total 10
            # HELP parley_connections_authenticated_total Connections that completed hello.
            # TYPE parley_connections_authenticated_total counter
            parley_connections_authenticated_total 8
            # HELP parley_auth_failures_total hello refusals by error code.
            # TYPE parley_auth_failures_total counter
            parley_auth_failures_total{code="token_bad_signature"} 2
            parley_auth_failures_total{code="token_expired"} 1
            # HELP parley_rest_auth_failures_total REST requests refused for their credentials, by code.
            # TYPE parley_rest_auth_failures_total counter
            parley_rest_auth_failures_total{code="bad_credentials"} 4
            # HELP parley_calls_active Calls in progress now, by state.
            # TYPE parley_calls_active gauge
            parley_calls_active{state="initiating"} 0
            parley_calls_active{state="progressing"} 0
            parley_calls_active{state="ringing"} 1
            parley_calls_active{state="answered"} 0
            parley_calls_active{state="established"} 2
            # HELP parley_calls_started_total call.start requests accepted.
            # TYPE parley_calls_started_total counter
            parley_calls_started_total 5
            # HELP parley_calls_established_total Calls that reached established (rate() of it is call setups per second).
            # TYPE parley_calls_established_total counter
            parley_calls_established_total 4
            # HELP parley_calls_ended_total Calls ended since the server started, by end cause.
            # TYPE parley_calls_ended_total counter
            parley_calls_ended_total{cause="canceled"} 0
            parley_calls_ended_total{cause="denied"} 0
            parley_calls_ended_total{cause="error"} 1
            parley_calls_ended_total{cause="hungUp"} 3
            parley_calls_ended_total{cause="inactive"} 0
            parley_calls_ended_total{cause="noAnswer"} 0
            parley_calls_ended_total{cause="otherDeviceAnswered"} 0
            parley_calls_ended_total{cause="timeout"} 0
            # HELP parley_media_packets_received_total Media packets received from devices.
            # TYPE parley_media_packets_received_total counter
            parley_media_packets_received_total 990
            # HELP parley_media_packets_forwarded_total Media packets relayed between call legs.
            # TYPE parley_media_packets_forwarded_total counter
            parley_media_packets_forwarded_total 980
            # HELP parley_media_packets_lost_total Media packets lost, as reported by the receivers.
            # TYPE parley_media_packets_lost_total counter
            parley_media_packets_lost_total 10
            # HELP parley_media_packets_dropped_total Media packets dropped by the server (bad SRTP, garbage).
            # TYPE parley_media_packets_dropped_total counter
            parley_media_packets_dropped_total 2
            # HELP parley_store_writes_pending Call record writes waiting for the store now.
            # TYPE parley_store_writes_pending gauge
            parley_store_writes_pending 7
            # HELP parley_store_write_retries_total Store transactions that could not commit (locked, busy, I/O) and were retried.
            # TYPE parley_store_write_retries_total counter
            parley_store_write_retries_total 3
            # HELP parley_store_writes_dropped_total Call record writes the store refused for good.
            # TYPE parley_store_writes_dropped_total counter
            parley_store_writes_dropped_total 1
            # HELP parley_signaling_held_batches Replies and events waiting for their call's record to be committed.
            # TYPE parley_signaling_held_batches gauge
            parley_signaling_held_batches 4
            # HELP parley_media_loss_ratio Lost over expected media packets since the server started.
            # TYPE parley_media_loss_ratio gauge
            parley_media_loss_ratio 0.01

            """
        #expect(text == expected)
    }

    @Test func labelValuesAreEscaped() {
        var counters = ServerMetrics.Counters()
        counters.authFailures = ["a\"b\\c\nd": 1]
        let text = MetricsRenderer.render(counters: counters, liveCalls: [:])
        #expect(text.contains("parley_auth_failures_total{code=\"a\\\"b\\\\c\\nd\"} 1\n"))
        #expect(MetricsRenderer.escapeLabelValue("plain") == "plain")
        #expect(MetricsRenderer.escapeLabelValue("\\\"\n") == "\\\\\\\"\\n")
    }

    @Test func valuesFormat() {
        #expect(MetricsRenderer.formatValue(0) == "0")
        #expect(MetricsRenderer.formatValue(12) == "12")
        #expect(MetricsRenderer.formatValue(0.25) == "0.25")
        #expect(MetricsRenderer.formatValue(.nan) == "NaN")
        #expect(MetricsRenderer.formatValue(.infinity) == "+Inf")
        #expect(MetricsRenderer.formatValue(-.infinity) == "-Inf")
        // No media yet: the ratio is 0, not NaN.
        #expect(MetricsRenderer.render(counters: .init(), liveCalls: [:]).contains("parley_media_loss_ratio 0\n"))
    }

    @Test func setupRateGaugeFollowsTheEstablishedCounter() {
        var counters = ServerMetrics.Counters()
        counters.callsEstablished = 4
        let text = MetricsRenderer.render(counters: counters, liveCalls: [:], setupsPerSecond: 0.5)
        #expect(text.contains("""
            parley_calls_established_total 4
            # HELP parley_call_setups_per_second Calls established per second over the last 60 s, measured between scrapes of /metrics.
            # TYPE parley_call_setups_per_second gauge
            parley_call_setups_per_second 0.5
            # HELP parley_calls_ended_total
            """))
    }

    @Test func setupRateWindow() {
        var window = RESTSetupRateWindow()
        #expect(window.rate(count: 0, at: 0) == 0)               // one sample: no rate yet
        #expect(window.rate(count: 30, at: 15_000) == 2)         // 30 calls in 15 s
        // Scrapes every 15 s at 2 calls/s, then 1 call/s: the rate covers the last 60 s.
        for step in 2...4 { _ = window.rate(count: step * 30, at: Int64(step) * 15_000) }
        #expect(window.rate(count: 150, at: 75_000) == 2)        // 15 s ... 75 s
        #expect(window.rate(count: 165, at: 90_000) == 1.75)     // 30 s ... 90 s: 105 calls in 60 s
        // A flood of scrapes in one second keeps one sample.
        let before = window.sampleCount
        for index in 0..<10_000 { _ = window.rate(count: 165, at: 90_000 + Int64(index % 999)) }
        #expect(window.sampleCount == before)
        #expect(window.sampleCount <= 61)
        // The clock going back starts over.
        #expect(window.rate(count: 170, at: 10_000) == 0)
        #expect(window.sampleCount == 1)
    }
}
