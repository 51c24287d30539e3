import Testing
@testable import ParleyBench

/// SIPp 3.6's `-trace_stat` file: the header and rows it writes (the columns cut to the ones
/// the bench reads and a few around them; the dates hold tabs).
@Suite struct SIPpStatisticsTests {
    static let header = "StartTime;LastResetTime;CurrentTime;ElapsedTime(P);ElapsedTime(C);TargetRate;CallRate(P);CallRate(C);"
        + "IncomingCall(P);IncomingCall(C);OutgoingCall(P);OutgoingCall(C);TotalCallCreated;CurrentCall;SuccessfulCall(P);"
        + "SuccessfulCall(C);FailedCall(P);FailedCall(C);Retransmissions(P);Retransmissions(C);ResponseTime1(P);ResponseTime1(C);"
        + "ResponseTimeRepartition1;ResponseTimeRepartition1_<10;"
    static func row(elapsed: String, outgoing: Int, successful: Int, failed: Int, retransmissions: Int, response: String) -> String {
        "2026-12-07\t13:11:00.849279\t1796649060.849279;2026-12-07\t13:11:02.864040\t1796649062.864040;"
            + "2026-12-07\t13:11:03.866242\t1796649063.866242;00:00:01;\(elapsed);200;199.601;198.939;0;0;200;\(outgoing);"
            + "\(outgoing);0;201;\(successful);0;\(failed);0;\(retransmissions);00:00:00:000000;\(response);;569;"
    }

    @Test func theLastRowGivesTheWholeRun() throws {
        let csv = Self.header + "\n"
            + Self.row(elapsed: "00:00:01", outgoing: 200, successful: 198, failed: 0, retransmissions: 0, response: "00:00:00:002000") + "\n"
            + Self.row(elapsed: "00:00:03", outgoing: 600, successful: 597, failed: 3, retransmissions: 12, response: "00:00:00:008000") + "\n"
        let statistics = try SIPpStatistics(csv: csv)
        #expect(statistics.outgoingCalls == 600)
        #expect(statistics.successfulCalls == 597)
        #expect(statistics.failedCalls == 3)
        #expect(statistics.retransmissions == 12)
        #expect(statistics.incomingCalls == 0)
        #expect(statistics.elapsedSeconds == 3)
        #expect(statistics.responseTime1Seconds == 0.008)
    }

    /// Windows line ends and a blank line after the last row change nothing.
    @Test func lineEndsAndTrailingBlankLinesAreIgnored() throws {
        let csv = Self.header + "\r\n" + Self.row(elapsed: "01:02:03", outgoing: 5, successful: 5, failed: 0, retransmissions: 0,
                                                   response: "00:00:01:500000") + "\r\n\r\n"
        let statistics = try SIPpStatistics(csv: csv)
        #expect(statistics.successfulCalls == 5)
        #expect(statistics.elapsedSeconds == 3723)
        #expect(statistics.responseTime1Seconds == 1.5)
    }

    @Test(arguments: ["", "StartTime;x;\n", "1;2;3\n4;5;6\n", "StartTime;A;B;C;\n1;2\n"])
    func whatIsNotAStatisticsFileIsAClearError(_ csv: String) {
        #expect(throws: SIPpStatistics.Failure.self) { try SIPpStatistics(csv: csv) }
    }

    @Test func aFileOverTheLimitIsRefusedUnread() {
        let csv = Self.header + "\n" + String(repeating: "x", count: SIPpStatistics.maximumBytes)
        #expect(throws: SIPpStatistics.Failure.self) { try SIPpStatistics(csv: csv) }
    }

    @Test func aMissingOrNonNumericColumnCountsAsZero() throws {
        let csv = "StartTime;SuccessfulCall(C);Retransmissions(C)\nnow;many;\n"
        let statistics = try SIPpStatistics(csv: csv)
        #expect(statistics.successfulCalls == 0)
        #expect(statistics.retransmissions == 0)
        #expect(statistics.failedCalls == 0)
        #expect(statistics.elapsedSeconds == nil)
    }

    @Test(arguments: [("00:00:00", 0.0), ("00:01:30", 90.0), ("02:00:00:000250", 7200.00025), ("00:00:00:999999", 0.999999)])
    func durations(_ text: String, _ seconds: Double) {
        #expect(SIPpStatistics.seconds(text) == seconds)
    }

    @Test(arguments: ["", "1:2", "00:60:00", "00:00:61", "00:00:00:1000", "-1:00:00", "a:b:c", "00:00:00:00000x", "1:2:3:4:5"])
    func badDurations(_ text: String) {
        #expect(SIPpStatistics.seconds(text) == nil)
    }
}
