public import ParleyCallModel
import ParleyCallCore
import ParleySignaling
import ParleySIPIO

/// Turns the server's counters into the Prometheus text exposition format, version 0.0.4
/// (`GET /metrics`): `# HELP` and `# TYPE` before each family, one sample per line, label
/// values escaped, families and label values in a fixed order so the text is stable.
///
/// Families (docs/operations.md, "Metrics"): `parley_connections_open`,
/// `parley_connections_total`, `parley_connections_authenticated_total`,
/// `parley_auth_failures_total{code}`, `parley_rest_auth_failures_total{code}`,
/// `parley_calls_active{state}`, `parley_calls_started_total`,
/// `parley_calls_established_total`, `parley_call_setups_per_second`, `parley_calls_ended_total{cause}`,
/// `parley_media_packets_received_total`, `parley_media_packets_forwarded_total`,
/// `parley_media_packets_lost_total`, `parley_media_packets_dropped_total`,
/// `parley_media_loss_ratio`, `parley_store_writes_pending`, `parley_store_write_retries_total`,
/// `parley_store_writes_dropped_total`, `parley_signaling_held_batches`; with SIP on,
/// `parley_sip_messages_received_total{transport}`, `parley_sip_messages_sent_total{transport}`,
/// `parley_sip_messages_dropped_total{reason}`, `parley_sip_requests_rejected_total`,
/// `parley_sip_requests_rate_limited_total{action}`, `parley_sip_keepalives_total`,
/// `parley_sip_connections_open`, `parley_sip_connections_refused_total`,
/// `parley_sip_connection_timeouts_total`; with dialling settings enforced,
/// `parley_dialling_refusals_total{reason}`; with conference rooms, `parley_conference_rooms`,
/// `parley_conference_participants`, `parley_conference_talkers`,
/// `parley_conference_tick_lateness_p99_seconds`, `parley_conference_tick_lateness_max_seconds`.
public enum MetricsRenderer {
    /// The exposition text for one scrape.
    /// - Parameters:
    ///   - counters: the signaling and media counters since the server started.
    ///   - liveCalls: calls in the engine now, by state (`CallControl.liveCallCounts()`);
    ///     every state but `ended` is written, 0 when absent.
    ///   - restAuthFailures: refused REST credentials by code.
    ///   - setupsPerSecond: calls established per second over the last minute, written as
    ///     the gauge `parley_call_setups_per_second` when given.
    ///   - conferences: the conference rooms now (`CallControl.conferenceStatistics()`).
    public static func render(counters: ServerMetrics.Counters, liveCalls: [CallState: Int],
                              restAuthFailures: [String: Int] = [:], setupsPerSecond: Double? = nil,
                              conferences: ConferenceStatistics? = nil) -> String {
        var out = ""
        family(&out, "parley_connections_open", .gauge, "WebSocket connections open now.",
               [([], Double(counters.connectionsOpen))])
        family(&out, "parley_connections_total", .counter, "WebSocket connections opened since the server started.",
               [([], Double(counters.connectionsTotal))])
        family(&out, "parley_connections_authenticated_total", .counter, "Connections that completed hello.",
               [([], Double(counters.authenticatedTotal))])
        family(&out, "parley_auth_failures_total", .counter, "hello refusals by error code.",
               labelled("code", counters.authFailures))
        family(&out, "parley_rest_auth_failures_total", .counter, "REST requests refused for their credentials, by code.",
               labelled("code", restAuthFailures))
        let liveStates = CallState.allCases.filter { $0 != .ended }
        family(&out, "parley_calls_active", .gauge, "Calls in progress now, by state.",
               liveStates.map { ([("state", $0.rawValue)], Double(liveCalls[$0] ?? 0)) })
        family(&out, "parley_calls_started_total", .counter, "call.start requests accepted.",
               [([], Double(counters.callsStarted))])
        family(&out, "parley_calls_established_total", .counter,
               "Calls that reached established (rate() of it is call setups per second).",
               [([], Double(counters.callsEstablished))])
        if let setupsPerSecond {
            family(&out, "parley_call_setups_per_second", .gauge,
                   "Calls established per second over the last 60 s, measured between scrapes of /metrics.",
                   [([], setupsPerSecond)])
        }
        var ended = counters.callsEnded
        for cause in SignalingMessage.EndCause.allCases where ended[cause.rawValue] == nil { ended[cause.rawValue] = 0 }
        family(&out, "parley_calls_ended_total", .counter, "Calls ended since the server started, by end cause.",
               labelled("cause", ended))
        family(&out, "parley_media_packets_received_total", .counter, "Media packets received from devices.",
               [([], Double(counters.mediaPacketsReceived))])
        family(&out, "parley_media_packets_forwarded_total", .counter, "Media packets relayed between call legs.",
               [([], Double(counters.mediaPacketsForwarded))])
        family(&out, "parley_media_packets_lost_total", .counter, "Media packets lost, as reported by the receivers.",
               [([], Double(counters.mediaPacketsLost))])
        family(&out, "parley_media_packets_dropped_total", .counter, "Media packets dropped by the server (bad SRTP, garbage).",
               [([], Double(counters.mediaPacketsDropped))])
        family(&out, "parley_store_writes_pending", .gauge, "Call record writes waiting for the store now.",
               [([], Double(counters.storeWritesPending))])
        family(&out, "parley_store_write_retries_total", .counter,
               "Store transactions that could not commit (locked, busy, I/O) and were retried.",
               [([], Double(counters.storeWriteRetries))])
        family(&out, "parley_store_writes_dropped_total", .counter, "Call record writes the store refused for good.",
               [([], Double(counters.storeWritesDropped))])
        family(&out, "parley_signaling_held_batches", .gauge,
               "Replies and events waiting for their call's record to be committed.",
               [([], Double(counters.heldActions))])
        let expected = counters.mediaPacketsReceived + counters.mediaPacketsLost
        family(&out, "parley_media_loss_ratio", .gauge, "Lost over expected media packets since the server started.",
               [([], expected > 0 ? Double(counters.mediaPacketsLost) / Double(expected) : 0)])
        if let sip = counters.sip { renderSIP(sip, into: &out) }
        if let refusals = counters.diallingRefusals {
            family(&out, "parley_dialling_refusals_total", .counter,
                   "Calls to phone numbers and SIP addresses refused by their application's dialling settings, by reason.",
                   DiallingRefusal.Reason.allCases.map { ([("reason", $0.rawValue)], Double(refusals[$0.rawValue] ?? 0)) })
        }
        if let conferences {
            family(&out, "parley_conference_rooms", .gauge, "Conference rooms with a mixer now.", [([], Double(conferences.rooms))])
            family(&out, "parley_conference_participants", .gauge, "Participants in conference rooms now.",
                   [([], Double(conferences.participants))])
            family(&out, "parley_conference_talkers", .gauge, "Conference participants talking now.", [([], Double(conferences.talkers))])
            family(&out, "parley_conference_tick_lateness_p99_seconds", .gauge,
                   "The worst room's 99th percentile of mixer tick lateness over its recent ticks.",
                   [([], seconds(conferences.tickLatenessP99))])
            family(&out, "parley_conference_tick_lateness_max_seconds", .gauge,
                   "The latest any mixer tick of a room open now ran after its deadline.",
                   [([], seconds(conferences.tickLatenessMaximum))])
        }
        return out
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The SIP transport's families (docs/sip.md, "Transports"), every label value written
    /// even at 0 so a rate can be taken from the first scrape.
    private static func renderSIP(_ sip: SIPTransportStatistics, into out: inout String) {
        let transports = SIPTransport.allCases
        family(&out, "parley_sip_messages_received_total", .counter, "SIP messages read off the wire, invalid ones included, by transport.",
               transports.map { ([("transport", $0.rawValue)], Double(sip.received[$0] ?? 0)) })
        family(&out, "parley_sip_messages_sent_total", .counter, "SIP messages handed to a socket, by transport.",
               transports.map { ([("transport", $0.rawValue)], Double(sip.sent[$0] ?? 0)) })
        family(&out, "parley_sip_messages_dropped_total", .counter, "SIP messages dropped, by reason.",
               SIPTransportStatistics.DropReason.allCases.map { ([("reason", $0.rawValue)], Double(sip.dropped[$0] ?? 0)) })
        family(&out, "parley_sip_requests_rejected_total", .counter,
               "SIP requests that failed validation and were answered by the transport (400, 416, 505, 513).",
               [([], Double(sip.rejected))])
        family(&out, "parley_sip_requests_rate_limited_total", .counter,
               "SIP requests over their source's rate limit: refused with 503, or dropped.",
               [([("action", "refused")], Double(sip.rateLimitRefused)), ([("action", "dropped")], Double(sip.rateLimitDropped))])
        family(&out, "parley_sip_keepalives_total", .counter, "SIP keepalives received (CRLF CRLF over TCP, line breaks over UDP).",
               [([], Double(sip.keepalives))])
        family(&out, "parley_sip_connections_open", .gauge, "SIP TCP and TLS connections open now, accepted and opened.",
               [([], Double(sip.connectionsOpen))])
        family(&out, "parley_sip_connections_refused_total", .counter,
               "SIP TCP and TLS connections closed at accept: over the total or the per-source limit.",
               [([], Double(sip.connectionsRefused))])
        family(&out, "parley_sip_connection_timeouts_total", .counter,
               "SIP TCP and TLS connections closed for idleness, an incomplete message, a slow connect or TLS handshake.",
               [([], Double(sip.connectionTimeouts))])
        family(&out, "parley_sip_tls_handshakes_total", .counter,
               "SIP TLS handshakes, accepted and opened: completed, or failed (garbage, a certificate refused, the timeout).",
               [([("result", "completed")], Double(sip.tlsHandshakes)), ([("result", "failed")], Double(sip.tlsHandshakeFailures))])
    }

    /// A label value escaped for the text format: backslash, double quote and line feed
    /// become `\\`, `\"` and `\n`.
    public static func escapeLabelValue(_ value: String) -> String {
        var out = ""
        for character in value.unicodeScalars {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// A sample value: integers without a fraction, `NaN`, `+Inf`, `-Inf`.
    public static func formatValue(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    private enum Kind: String { case counter, gauge }

    private typealias Sample = (labels: [(String, String)], value: Double)

    private static func labelled(_ name: String, _ values: [String: Int]) -> [Sample] {
        values.sorted { $0.key < $1.key }.map { ([(name, $0.key)], Double($0.value)) }
    }

    private static func family(_ out: inout String, _ name: String, _ kind: Kind, _ help: String, _ samples: [Sample]) {
        // HELP text escapes only backslash and line feed (no quotes around it).
        let escapedHelp = help.replacingBackslashesAndNewlines()
        out += "# HELP \(name) \(escapedHelp)\n# TYPE \(name) \(kind.rawValue)\n"
        for sample in samples {
            out += name
            if !sample.labels.isEmpty {
                out += "{" + sample.labels.map { "\($0.0)=\"\(escapeLabelValue($0.1))\"" }.joined(separator: ",") + "}"
            }
            out += " " + formatValue(sample.value) + "\n"
        }
    }
}

extension String {
    fileprivate func replacingBackslashesAndNewlines() -> String {
        var out = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
