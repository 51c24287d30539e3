import Foundation
import ParleySDK
import Testing
@testable import ParleyCLI

/// The exact text people and scripts read: event lines, statistics, summaries, JSON.
@Suite struct SoftphoneFormatterTests {
    let text = SoftphoneFormatter(json: false)
    let json = SoftphoneFormatter(json: true)
    /// 2025-11-29 12:00:01.234 UTC.
    let time: Int64 = 1_764_417_601_234
    let callID = "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13"

    @Test func clockInZones() {
        #expect(text.clock(time) == "12:00:01.234")
        #expect(SoftphoneFormatter(json: false, utcOffsetSeconds: 3600).clock(time) == "13:00:01.234")
        #expect(SoftphoneFormatter(json: false, utcOffsetSeconds: -13 * 3600).clock(time) == "23:00:01.234")
        #expect(text.clock(0) == "00:00:00.000")
        #expect(text.clock(-1) == "23:59:59.999")
    }

    @Test func eventLines() {
        #expect(text.line(.progressing, callID: callID, timeMs: time) == "12:00:01.234 progressing")
        #expect(text.line(.ringing, callID: callID, timeMs: time) == "12:00:01.234 ringing")
        #expect(text.line(.answered, callID: callID, timeMs: time) == "12:00:01.234 answered")
        #expect(text.line(.established, callID: callID, timeMs: time) == "12:00:01.234 established")
        #expect(text.line(.ended(cause: .hungUp, errorCode: nil, errorMessage: nil), callID: callID, timeMs: time) == "12:00:01.234 ended hungUp")
        #expect(text.line(.ended(cause: .error, errorCode: "destination_not_found", errorMessage: "destination user not found"), callID: callID, timeMs: time)
            == "12:00:01.234 ended error: destination user not found")
        #expect(text.line(.ended(cause: .error, errorCode: "media_failed", errorMessage: nil), callID: callID, timeMs: time)
            == "12:00:01.234 ended error: media_failed")
        #expect(text.line(.calling(callee: "bob", headers: ["b": "2", "a": "1"]), callID: callID, timeMs: time)
            == "12:00:01.234 calling bob (call \(callID)) headers a=1 b=2")
        #expect(text.line(.incoming(caller: "alice", headers: [:]), callID: callID, timeMs: time)
            == "12:00:01.234 incoming call from alice (call \(callID))")
        #expect(text.line(.incoming(caller: "alice", headers: [:], displayName: "Alice Ödman"), callID: callID, timeMs: time)
            == "12:00:01.234 incoming call from alice \"Alice Ödman\" (call \(callID))")
        #expect(text.line(.connecting(server: "http://127.0.0.1:8080", userID: "alice"), callID: nil, timeMs: time)
            == "12:00:01.234 connecting to http://127.0.0.1:8080 as alice")
        #expect(text.line(.hangingUp(reason: "duration 5.0 s"), callID: callID, timeMs: time) == "12:00:01.234 hanging up (duration 5.0 s)")
        #expect(text.line(.listening(answerPolicy: .answer(delay: 0)), callID: nil, timeMs: time) == "12:00:01.234 listening: answering calls")
    }

    @Test func statisticsText() {
        let statistics = SoftphoneStatistics(packetsSent: 251, packetsReceived: 247, packetsLost: 3, jitterMs: 2.125, roundTripMs: 1.04)
        #expect(statistics.lossPercent == 1.2)
        #expect(text.statisticsText(elapsed: 5.9, statistics) == "00:05 rx 247 packets, tx 251, loss 1.2 %, jitter 2.1 ms, rtt 1.0 ms")
        #expect(text.statisticsText(elapsed: 3725, SoftphoneStatistics()) == "1:02:05 rx 0 packets, tx 0, loss 0.0 %, jitter - ms, rtt - ms")
        #expect(text.line(.statistics(elapsed: 5, statistics), callID: callID, timeMs: time)
            == "12:00:01.234 00:05 rx 247 packets, tx 251, loss 1.2 %, jitter 2.1 ms, rtt 1.0 ms")
    }

    @Test func jsonLines() {
        #expect(json.line(.ringing, callID: callID, timeMs: time) == #"{"event":"ringing","timeMs":1764417601234,"callId":"\#(callID)"}"#)
        #expect(json.line(.ended(cause: .error, errorCode: "destination_not_found", errorMessage: "destination user not found"), callID: callID, timeMs: time)
            == #"{"event":"ended","timeMs":1764417601234,"callId":"\#(callID)","cause":"error","errorCode":"destination_not_found","errorMessage":"destination user not found"}"#)
        #expect(json.line(.incoming(caller: "alice", headers: ["X-Order": "1\"8"]), callID: callID, timeMs: time)
            == #"{"event":"incoming","timeMs":1764417601234,"callId":"\#(callID)","from":"alice","headers":{"X-Order":"1\"8"}}"#)
        #expect(json.line(.incoming(caller: "alice", headers: [:], displayName: "Alice"), callID: callID, timeMs: time)
            == #"{"event":"incoming","timeMs":1764417601234,"callId":"\#(callID)","from":"alice","headers":{},"displayName":"Alice"}"#)
        let statistics = SoftphoneStatistics(packetsSent: 10, packetsReceived: 9, packetsLost: 1, jitterMs: 1.5, roundTripMs: nil)
        #expect(json.line(.statistics(elapsed: 1.25, statistics), callID: callID, timeMs: time)
            == #"{"event":"stats","timeMs":1764417601234,"callId":"\#(callID)","elapsedSeconds":1.250,"packetsSent":10,"packetsReceived":9,"packetsLost":1,"lossPercent":10.00,"jitterMs":1.50,"rttMs":null,"framesPlayed":0,"framesFECRecovered":0,"framesConcealed":0,"framesComfortNoise":0,"framesSilent":0,"framesStretched":0,"framesShrunk":0,"packetsLate":0,"targetDelayMs":0.00,"currentDelayMs":0.00,"audioCaptureStartedMs":null,"audioPlayoutStartedMs":null}"#)
        #expect(json.line(.connecting(server: "http://h", userID: "a"), callID: nil, timeMs: 5) == #"{"event":"connecting","timeMs":5,"server":"http://h","user":"a"}"#)
    }

    @Test func summaries() {
        var summary = SoftphoneCallSummary(
            callID: callID, remoteUserID: "bob", outgoing: true, cause: .hungUp, errorCode: nil, errorMessage: nil,
            wasEstablished: true, duration: 5.04,
            statistics: SoftphoneStatistics(
                packetsSent: 252, packetsReceived: 250, packetsLost: 0, jitterMs: 0.84, roundTripMs: 0.31,
                playout: .init(framesPlayed: 240, framesFECRecovered: 2, framesConcealed: 6, framesComfortNoise: 1, framesSilent: 4,
                               framesStretched: 3, framesShrunk: 5, packetsLate: 7, targetDelayMs: 40, currentDelayMs: 38.5),
                audioCaptureStartedMs: 1764417596194.5, audioPlayoutStartedMs: 1764417596210.25),
            exitCode: .success)
        #expect(text.summary(summary, timeMs: time)
            == "12:00:01.234 summary: ended hungUp, duration 5.0 s, received 250 packets, sent 252, loss 0.0 % (0 lost), jitter 0.8 ms, rtt 0.3 ms"
            + "; playout 240 frames, concealed 6 (FEC 2, comfort noise 1), silent 4, stretched 3, shrunk 5, late 7, target delay 40.0 ms")
        #expect(json.summary(summary, timeMs: time)
            == #"{"event":"summary","timeMs":1764417601234,"callId":"\#(callID)","remoteUser":"bob","direction":"outgoing","cause":"hungUp","established":true,"durationSeconds":5.040,"packetsSent":252,"packetsReceived":250,"packetsLost":0,"lossPercent":0.00,"jitterMs":0.84,"rttMs":0.31,"framesPlayed":240,"framesFECRecovered":2,"framesConcealed":6,"framesComfortNoise":1,"framesSilent":4,"framesStretched":3,"framesShrunk":5,"packetsLate":7,"targetDelayMs":40.00,"currentDelayMs":38.50,"audioCaptureStartedMs":1764417596194.500,"audioPlayoutStartedMs":1764417596210.250,"exitCode":0}"#)
        #expect(SoftphoneFormatter.failureMessage(summary) == nil)

        summary.cause = .error
        summary.errorCode = "destination_not_found"
        summary.errorMessage = "destination user not found"
        summary.exitCode = .callError
        #expect(SoftphoneFormatter.failureMessage(summary) == "call ended: error: destination user not found")
        summary.cause = .denied
        summary.exitCode = .denied
        #expect(SoftphoneFormatter.failureMessage(summary) == "call ended: denied")
        summary.cause = .hungUp
        summary.exitCode = .notEstablished
        #expect(SoftphoneFormatter.failureMessage(summary) == "call ended: hungUp before its media was established")
    }

    @Test func playoutCountersComeFromTheSDKsStatistics() {
        let sdk = ParleyCallStatistics(
            packetsSent: 10, packetsReceived: 9, framesPlayed: 240, framesFECRecovered: 2, framesConcealed: 6,
            framesComfortNoise: 1, framesSilent: 4, framesStretched: 3, framesShrunk: 5, packetsLate: 7,
            targetDelayMilliseconds: 40, currentDelayMilliseconds: 38.5)
        #expect(SoftphoneShell.statistics(sdk).playout == SoftphoneStatistics.Playout(
            framesPlayed: 240, framesFECRecovered: 2, framesConcealed: 6, framesComfortNoise: 1, framesSilent: 4,
            framesStretched: 3, framesShrunk: 5, packetsLate: 7, targetDelayMs: 40, currentDelayMs: 38.5))
        #expect(SoftphoneShell.statistics(sdk).audioPlayoutStartedMs == nil)
        var started = sdk
        started.audioCaptureStartedAt = Date(timeIntervalSince1970: 1_764_417_596.25)
        started.audioPlayoutStartedAt = Date(timeIntervalSince1970: 1_764_417_596.5)
        #expect(SoftphoneShell.statistics(started).audioCaptureStartedMs == 1_764_417_596_250)
        #expect(SoftphoneShell.statistics(started).audioPlayoutStartedMs == 1_764_417_596_500)
    }

    @Test func jsonStringEscapes() {
        #expect(JSONLineValue.quoted("a\"b\\c\n\t\u{1}\u{7F}é") == "\"a\\\"b\\\\c\\n\\t\\u0001\u{7F}é\"")
    }

    @Test func fixedPoint() {
        #expect(fixed(0, 1) == "0.0")
        #expect(fixed(1.25, 1) == "1.3")
        #expect(fixed(-1.25, 1) == "-1.3")
        #expect(fixed(-0.01, 1) == "0.0")
        #expect(fixed(12.5, 0) == "13")
        #expect(fixed(0.001, 3) == "0.001")
        #expect(fixed(.nan, 2) == "0")
        #expect(fixed(.infinity, 2) == "0")
        #expect(fixed(1e300, 2) == "9e15")
    }

    @Test func exitCodesPerCause() {
        typealias O = SoftphoneOutcome
        #expect(O.exitCode(cause: .hungUp, wasEstablished: true, outgoing: true) == .success)
        #expect(O.exitCode(cause: .hungUp, wasEstablished: false, outgoing: true) == .notEstablished)
        #expect(O.exitCode(cause: .error, wasEstablished: false, outgoing: true) == .callError)
        #expect(O.exitCode(cause: .denied, wasEstablished: false, outgoing: true) == .denied)
        #expect(O.exitCode(cause: .noAnswer, wasEstablished: false, outgoing: true) == .noAnswer)
        #expect(O.exitCode(cause: .timeout, wasEstablished: false, outgoing: true) == .timeout)
        #expect(O.exitCode(cause: .canceled, wasEstablished: false, outgoing: true) == .canceled)
        #expect(O.exitCode(cause: .inactive, wasEstablished: true, outgoing: true) == .inactive)
        #expect(O.exitCode(cause: .none, wasEstablished: true, outgoing: true) == .callError)
        // A listener: calls that never became its own are normal.
        #expect(O.exitCode(cause: .denied, wasEstablished: false, outgoing: false) == .success)
        #expect(O.exitCode(cause: .canceled, wasEstablished: false, outgoing: false) == .success)
        #expect(O.exitCode(cause: .otherDeviceAnswered, wasEstablished: false, outgoing: false) == .success)
        #expect(O.exitCode(cause: .inactive, wasEstablished: true, outgoing: false) == .inactive)
        #expect(O.combined([.success, .inactive, .timeout]) == .inactive)
        #expect(O.combined([]) == .success)
        // Distinct codes, so scripts can tell the ends apart.
        #expect(Set(SoftphoneExitCode.allCases.map(\.rawValue)).count == SoftphoneExitCode.allCases.count)
    }
}
