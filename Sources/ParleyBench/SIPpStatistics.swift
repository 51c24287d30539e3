/// The last row of the statistics file SIPp writes with `-trace_stat -stf FILE`: a header
/// line of column names and one row per `-fd` period, fields separated by `;` (the date
/// columns hold tabs, never `;`). SIPp writes a final row as it exits, so the last row holds
/// the cumulative (`(C)`) counters of the whole run.
struct SIPpStatistics: Equatable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The last row by column name.
    let fields: [String: String]

    /// A file larger than this is not SIPp's statistics of a bounded run.
    static let maximumBytes = 16 << 20

    init(csv: String) throws(Failure) {
        guard csv.utf8.count <= Self.maximumBytes else { throw Failure(description: "statistics file over \(Self.maximumBytes) bytes") }
        let lines = csv.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).filter { !$0.allSatisfy { $0 == " " || $0 == "\r" } }
        guard let header = lines.first, header.hasPrefix("StartTime;") else { throw Failure(description: "no SIPp statistics header") }
        guard lines.count >= 2, let last = lines.last else { throw Failure(description: "no statistics row after the header") }
        let names = header.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmed(of: " \r") }
        let values = last.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmed(of: " \r") }
        guard values.count >= names.filter({ !$0.isEmpty }).count else {
            throw Failure(description: "the last row has \(values.count) fields for \(names.count) columns")
        }
        var fields: [String: String] = [:]
        for (name, value) in zip(names, values) where !name.isEmpty { fields[name] = value }
        self.fields = fields
    }

    /// A whole-number column; nil when missing or not a number.
    func count(_ name: String) -> Int? { fields[name].flatMap { Int($0) } }

    /// Calls that ran their scenario to the end.
    var successfulCalls: Int { count("SuccessfulCall(C)") ?? 0 }
    /// Calls that failed for any reason (timeouts, unexpected messages, retransmissions given up).
    var failedCalls: Int { count("FailedCall(C)") ?? 0 }
    /// Messages SIPp sent again because no answer came within its timer (500 ms for the
    /// built-in scenarios): the sign that the far side could not keep up.
    var retransmissions: Int { count("Retransmissions(C)") ?? 0 }
    /// Calls SIPp placed (a uac) or answered (a uas).
    var outgoingCalls: Int { count("OutgoingCall(C)") ?? 0 }
    var incomingCalls: Int { count("IncomingCall(C)") ?? 0 }
    /// Seconds of the whole run.
    var elapsedSeconds: Double? { fields["ElapsedTime(C)"].flatMap(Self.seconds) }
    /// The mean of response time 1 (the built-in uac: INVITE sent to 200 received), seconds.
    var responseTime1Seconds: Double? { fields["ResponseTime1(C)"].flatMap(Self.seconds) }

    /// SIPp's durations: `HH:MM:SS` or `HH:MM:SS:uuuuuu` (microseconds).
    static func seconds(_ text: String) -> Double? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3 || parts.count == 4, let hours = Int(parts[0]), let minutes = Int(parts[1]), let whole = Int(parts[2]),
              hours >= 0, (0..<60).contains(minutes), (0..<60).contains(whole) else { return nil }
        var seconds = Double(hours * 3600 + minutes * 60 + whole)
        if parts.count == 4 {
            guard let micro = Int(parts[3]), micro >= 0, parts[3].count == 6 else { return nil }
            seconds += Double(micro) / 1e6
        }
        return seconds
    }
}

extension Substring {
    fileprivate func trimmed(of set: String) -> String {
        var text = self
        while let first = text.first, set.contains(first) { text = text.dropFirst() }
        while let last = text.last, set.contains(last) { text = text.dropLast() }
        return String(text)
    }
}
