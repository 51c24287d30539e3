import ParleySDK
import ParleyWireCore
/// Turns softphone events into output lines: for people (`12:00:01.234 ringing`) or, with
/// `--json`, one JSON object per line for machines. Pure: the time and the time zone
/// offset are arguments.
struct SoftphoneFormatter {
    var json: Bool
    /// Seconds east of UTC for the clock times people read (the local time zone).
    var utcOffsetSeconds: Int = 0

    /// `HH:MM:SS.mmm` of `timeMs` (milliseconds since the Unix epoch) in the formatter's zone.
    func clock(_ timeMs: Int64) -> String {
        let local = timeMs + Int64(utcOffsetSeconds) * 1000
        let dayMs: Int64 = 86_400_000
        let ms = ((local % dayMs) + dayMs) % dayMs
        let hours = ms / 3_600_000, minutes = ms / 60_000 % 60, seconds = ms / 1000 % 60, millis = ms % 1000
        return "\(pad(hours, 2)):\(pad(minutes, 2)):\(pad(seconds, 2)).\(pad(millis, 3))"
    }

    /// The line for `event` of the call `callID` (nil before a call exists) at `timeMs`.
    func line(_ event: SoftphoneEvent, callID: String?, timeMs: Int64) -> String {
        json ? jsonLine(event, callID: callID, timeMs: timeMs) : "\(clock(timeMs)) \(text(event, callID: callID))"
    }

    /// The live statistics text without the clock: what a terminal shows on its
    /// rewritten status line, and what follows the clock on plain output.
    func statisticsText(elapsed: Double, _ statistics: SoftphoneStatistics) -> String {
        "\(elapsedClock(elapsed)) rx \(statistics.packetsReceived) packets, tx \(statistics.packetsSent), loss "
            + "\(fixed(statistics.lossPercent, 1)) %, jitter \(milliseconds(statistics.jitterMs)), rtt \(milliseconds(statistics.roundTripMs))"
    }

    /// The last line of a call.
    func summary(_ summary: SoftphoneCallSummary, timeMs: Int64) -> String {
        let statistics = summary.statistics
        if json {
            var fields: [(String, JSONLineValue)] = [
                ("event", .string("summary")), ("timeMs", .integer(timeMs)), ("callId", .string(summary.callID)),
                ("remoteUser", .string(summary.remoteUserID)), ("direction", .string(summary.outgoing ? "outgoing" : "incoming")),
                ("cause", .string(summary.cause.rawValue)),
            ]
            if let code = summary.errorCode { fields.append(("errorCode", .string(code))) }
            if let message = summary.errorMessage { fields.append(("errorMessage", .string(message))) }
            fields.append(("established", .bool(summary.wasEstablished)))
            fields.append(("durationSeconds", .number(summary.duration, decimals: 3)))
            fields += statisticsFields(statistics)
            fields.append(("exitCode", .integer(Int64(summary.exitCode.rawValue))))
            return JSONLineValue.object(fields)
        }
        var text = "\(clock(timeMs)) summary: ended \(endText(summary.cause, summary.errorMessage, summary.errorCode))"
        text += ", duration \(fixed(summary.duration, 1)) s"
        text += ", received \(statistics.packetsReceived) packets, sent \(statistics.packetsSent)"
        text += ", loss \(fixed(statistics.lossPercent, 1)) % (\(statistics.packetsLost) lost)"
        text += ", jitter \(milliseconds(statistics.jitterMs)), rtt \(milliseconds(statistics.roundTripMs))"
        let playout = statistics.playout
        text += "; playout \(playout.framesPlayed) frames, concealed \(playout.framesConcealed)"
        text += " (FEC \(playout.framesFECRecovered), comfort noise \(playout.framesComfortNoise)), silent \(playout.framesSilent)"
        text += ", stretched \(playout.framesStretched), shrunk \(playout.framesShrunk), late \(playout.packetsLate)"
        text += ", target delay \(milliseconds(playout.targetDelayMs))"
        return text
    }

    /// The one-line error for standard error when a call did not end well, e.g.
    /// `call ended: error: destination user not found`; nil for a success.
    static func failureMessage(_ summary: SoftphoneCallSummary) -> String? {
        guard summary.exitCode != .success else { return nil }
        if summary.exitCode == .notEstablished {
            return "call ended: hungUp before its media was established"
        }
        return "call ended: \(endText(summary.cause, summary.errorMessage, summary.errorCode))"
    }

    private func text(_ event: SoftphoneEvent, callID: String?) -> String {
        switch event {
        case .connecting(let server, let user): return "connecting to \(server) as \(user)"
        case .signedIn(let user): return "signed in as \(user)"
        case .listening(let policy):
            switch policy {
            case .interactive: return "listening: Enter answers a call, d then Enter declines it"
            case .answer(let delay): return delay > 0 ? "listening: answering calls after \(fixed(delay, 1)) s" : "listening: answering calls"
            case .decline: return "listening: declining calls"
            }
        case .calling(let callee, let headers, let kind):
            let what = switch kind {
            case .phone: "phone number "
            case .sip: "SIP address "
            case .user, .conference: ""
            }
            return "calling \(what)\(callee) (call \(callID ?? "?"))" + headerText(headers)
        case .incoming(let caller, let headers, let displayName):
            let name = displayName.map { " \"\($0)\"" } ?? ""
            return "incoming call from \(caller)\(name) (call \(callID ?? "?"))" + headerText(headers)
        case .progressing: return "progressing"
        case .ringing: return "ringing"
        case .answered: return "answered"
        case .established: return "established"
        case .responseHeaders(let headers): return "response" + headerText(headers)
        case .dtmfReceived(let digits): return "dtmf received \(digits)"
        case .held: return "on hold"
        case .resumed: return "resumed"
        case .remoteHeld: return "on hold by the other party"
        case .remoteResumed: return "resumed by the other party"
        // "(nobody)" cannot be a user id, so it never reads as one.
        case .talking(let users): return "talking: " + (users.isEmpty ? "(nobody)" : users.joined(separator: ", "))
        case .answering: return "answering"
        case .declining: return "declining"
        case .hangingUp(let reason): return "hanging up (\(reason))"
        case .ended(let cause, let code, let message): return "ended \(Self.endText(cause, message, code))"
        case .statistics(let elapsed, let statistics): return statisticsText(elapsed: elapsed, statistics)
        case .pushRegistered(let type, let already): return "push token \(already ? "already registered" : "registered") (\(type))"
        case .pushRelayed(let caller): return "push from \(caller) relayed (call \(callID ?? "?"))"
        case .pushExpired(let caller): return "push from \(caller) expired (call \(callID ?? "?")): a missed call"
        }
    }

    private func jsonLine(_ event: SoftphoneEvent, callID: String?, timeMs: Int64) -> String {
        var fields: [(String, JSONLineValue)] = [("event", .string(Self.jsonName(event))), ("timeMs", .integer(timeMs))]
        if let callID { fields.append(("callId", .string(callID))) }
        switch event {
        case .connecting(let server, let user): fields += [("server", .string(server)), ("user", .string(user))]
        case .signedIn(let user): fields.append(("user", .string(user)))
        case .listening(let policy):
            switch policy {
            case .interactive: fields.append(("answer", .string("interactive")))
            case .answer(let delay): fields += [("answer", .string("auto")), ("answerDelaySeconds", .number(delay, decimals: 3))]
            case .decline: fields.append(("answer", .string("decline")))
            }
        case .calling(let callee, let headers, let kind):
            fields += [("to", .string(callee)), ("headers", .stringMap(headers))]
            // Absent for a user, as before destinations had kinds.
            if kind != .user { fields.append(("kind", .string(kind.rawValue))) }
        case .incoming(let caller, let headers, let displayName):
            fields += [("from", .string(caller)), ("headers", .stringMap(headers))]
            if let displayName { fields.append(("displayName", .string(displayName))) }
        case .hangingUp(let reason): fields.append(("reason", .string(reason)))
        case .responseHeaders(let headers): fields.append(("headers", .stringMap(headers)))
        case .dtmfReceived(let digits): fields.append(("digits", .string(digits)))
        case .talking(let users): fields.append(("talking", .stringArray(users)))
        case .ended(let cause, let code, let message):
            fields.append(("cause", .string(cause.rawValue)))
            if let code { fields.append(("errorCode", .string(code))) }
            if let message { fields.append(("errorMessage", .string(message))) }
        case .statistics(let elapsed, let statistics):
            fields.append(("elapsedSeconds", .number(elapsed, decimals: 3)))
            fields += statisticsFields(statistics)
        case .pushRegistered(let type, let already): fields += [("pushType", .string(type)), ("already", .bool(already))]
        case .pushRelayed(let caller), .pushExpired(let caller): fields.append(("from", .string(caller)))
        case .progressing, .ringing, .answered, .established, .answering, .declining, .held, .resumed, .remoteHeld, .remoteResumed: break
        }
        return JSONLineValue.object(fields)
    }

    private func statisticsFields(_ statistics: SoftphoneStatistics) -> [(String, JSONLineValue)] {
        [
            ("packetsSent", .integer(Int64(statistics.packetsSent))),
            ("packetsReceived", .integer(Int64(statistics.packetsReceived))),
            ("packetsLost", .integer(Int64(statistics.packetsLost))),
            ("lossPercent", .number(statistics.lossPercent, decimals: 2)),
            ("jitterMs", statistics.jitterMs.map { .number($0, decimals: 2) } ?? .null),
            ("rttMs", statistics.roundTripMs.map { .number($0, decimals: 2) } ?? .null),
            ("framesPlayed", .integer(Int64(statistics.playout.framesPlayed))),
            ("framesFECRecovered", .integer(Int64(statistics.playout.framesFECRecovered))),
            ("framesConcealed", .integer(Int64(statistics.playout.framesConcealed))),
            ("framesComfortNoise", .integer(Int64(statistics.playout.framesComfortNoise))),
            ("framesSilent", .integer(Int64(statistics.playout.framesSilent))),
            ("framesStretched", .integer(Int64(statistics.playout.framesStretched))),
            ("framesShrunk", .integer(Int64(statistics.playout.framesShrunk))),
            ("packetsLate", .integer(Int64(statistics.playout.packetsLate))),
            ("targetDelayMs", .number(statistics.playout.targetDelayMs, decimals: 2)),
            ("currentDelayMs", .number(statistics.playout.currentDelayMs, decimals: 2)),
            ("audioCaptureStartedMs", statistics.audioCaptureStartedMs.map { .number($0, decimals: 3) } ?? .null),
            ("audioPlayoutStartedMs", statistics.audioPlayoutStartedMs.map { .number($0, decimals: 3) } ?? .null),
        ]
    }

    /// The event's name in JSON lines: the word people see, or `stats`.
    static func jsonName(_ event: SoftphoneEvent) -> String {
        switch event {
        case .connecting: "connecting"
        case .signedIn: "signedIn"
        case .listening: "listening"
        case .calling: "calling"
        case .incoming: "incoming"
        case .progressing: "progressing"
        case .ringing: "ringing"
        case .answered: "answered"
        case .established: "established"
        case .responseHeaders: "responseHeaders"
        case .dtmfReceived: "dtmfReceived"
        case .held: "held"
        case .resumed: "resumed"
        case .remoteHeld: "remoteHeld"
        case .remoteResumed: "remoteResumed"
        case .talking: "talking"
        case .answering: "answering"
        case .declining: "declining"
        case .hangingUp: "hangingUp"
        case .ended: "ended"
        case .statistics: "stats"
        case .pushRegistered: "pushRegistered"
        case .pushRelayed: "pushRelayed"
        case .pushExpired: "pushExpired"
        }
    }

    /// `hungUp`, or `error: destination user not found` (the message, else the code).
    private static func endText(_ cause: ParleyCallEndCause, _ message: String?, _ code: String?) -> String {
        guard cause == .error else { return cause.rawValue }
        return "error: \(message ?? code ?? "unknown error")"
    }

    private func endText(_ cause: ParleyCallEndCause, _ message: String?, _ code: String?) -> String {
        Self.endText(cause, message, code)
    }

    private func headerText(_ headers: [String: String]) -> String {
        guard !headers.isEmpty else { return "" }
        return " headers " + headers.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }

    /// `MM:SS`, or `H:MM:SS` from an hour on.
    private func elapsedClock(_ seconds: Double) -> String {
        let whole = Int64(max(0, seconds))
        let hours = whole / 3600, minutes = whole / 60 % 60, secs = whole % 60
        return hours > 0 ? "\(hours):\(pad(minutes, 2)):\(pad(secs, 2))" : "\(pad(minutes, 2)):\(pad(secs, 2))"
    }

    private func milliseconds(_ value: Double?) -> String {
        value.map { "\(fixed($0, 1)) ms" } ?? "- ms"
    }

    private func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

/// Fixed-point text of `value` with `decimals` digits after the point, rounded half away
/// from zero; no locale, no exponent (JSON and people read it the same).
func fixed(_ value: Double, _ decimals: Int) -> String {
    guard value.isFinite else { return "0" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(value) * scale).rounded(.toNearestOrAwayFromZero)
    guard scaled < 9e15 else { return value < 0 ? "-9e15" : "9e15" }
    let integer = Int64(scaled)
    let factor = Int64(scale)
    let whole = integer / factor, fraction = integer % factor
    let sign = value < 0 && integer != 0 ? "-" : ""
    guard decimals > 0 else { return "\(sign)\(whole)" }
    let fractionDigits = String(fraction)
    return "\(sign)\(whole)." + String(repeating: "0", count: decimals - fractionDigits.count) + fractionDigits
}

/// A JSON value for one output line, written with members in the given order.
enum JSONLineValue {
    case string(String)
    case integer(Int64)
    case number(Double, decimals: Int)
    case bool(Bool)
    case null
    case stringMap([String: String])
    case stringArray([String])

    /// `{"a":1,...}` with the members in order.
    static func object(_ fields: [(String, JSONLineValue)]) -> String {
        "{" + fields.map { quoted($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
    }

    var text: String {
        switch self {
        case .string(let value): Self.quoted(value)
        case .integer(let value): String(value)
        case .number(let value, let decimals): fixed(value, decimals)
        case .bool(let value): value ? "true" : "false"
        case .null: "null"
        case .stringMap(let map): Self.object(map.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })
        case .stringArray(let values): "[" + values.map(Self.quoted).joined(separator: ",") + "]"
        }
    }

    /// A JSON string literal (RFC 8259).
    static func quoted(_ value: String) -> String { JSONString.quoted(value) }
}
