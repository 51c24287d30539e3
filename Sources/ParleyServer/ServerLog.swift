import Foundation
import Synchronization

/// Structured log lines: `2026-12-01T19:20:00.123Z info call.start call=<id> user=alice ...`,
/// one line per event, written to standard error (or any sink). Every line about a call
/// carries `call=<id>` so `grep call=<id>` shows the call's whole story.
public final class ServerLog: Sendable {
    public let level: LogLevel
    private let sink: @Sendable (String) -> Void

    /// - Parameter sink: receives each finished line without its newline; by default
    ///   standard error.
    public init(level: LogLevel = .info, sink: (@Sendable (String) -> Void)? = nil) {
        self.level = level
        self.sink = sink ?? { line in
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }

    /// Writes `event` with `fields` (`key=value`, values quoted when they hold spaces,
    /// quotes or `=`), if `level` is at or above the log's level.
    public func log(_ level: LogLevel, _ event: String, _ fields: KeyValuePairs<String, String> = [:]) {
        guard level >= self.level else { return }
        var line = Self.timestamp() + " " + level.rawValue + " " + event
        for (key, value) in fields {
            line += " " + key + "=" + Self.quoted(value)
        }
        sink(line)
    }

    public func debug(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.debug, event, fields) }
    public func info(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.info, event, fields) }
    public func warning(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.warning, event, fields) }
    public func error(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.error, event, fields) }

    static func quoted(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.utf8.contains { $0 <= 0x20 || $0 == 0x22 || $0 == 0x3D || $0 == 0x5C || $0 == 0x7F }
        guard needsQuotes else { return value }
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += String(format: "\\u%04X", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    static func timestamp() -> String {
        let milliseconds = ServerClock.now().unixMilliseconds
        let (whole, fraction) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        var seconds = time_t(fraction < 0 ? whole - 1 : whole)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
            parts.tm_hour, parts.tm_min, parts.tm_sec, Int(fraction < 0 ? fraction + 1000 : fraction))
    }
}
