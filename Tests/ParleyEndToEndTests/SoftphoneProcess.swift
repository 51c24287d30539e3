import Foundation

/// A `parley call` or `parley listen` process run with `--json`: its output read as
/// events (one JSON object per line, docs/softphone.md).
final class SoftphoneProcess: @unchecked Sendable {
    // Used from one test's thread; ManagedProcess synchronises the output itself.
    let process: ManagedProcess

    init(_ name: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        process = try ManagedProcess(name: name, executable: BuiltProducts.parley, arguments: arguments + ["--json"], environment: environment)
    }

    /// `parley listen` signed in as `user`, with the given extra flags (and environment).
    static func listen(_ name: String, on server: ParleydInstance, as user: String, _ flags: [String] = [],
                       environment: [String: String] = [:]) throws -> SoftphoneProcess {
        let listener = try SoftphoneProcess(name, ["listen"] + server.clientFlags(as: user) + flags, environment: environment)
        try listener.waitForEvent("listening", timeout: 20)
        return listener
    }

    /// `parley call callee` signed in as `user`.
    static func call(_ callee: String, on server: ParleydInstance, as user: String, _ flags: [String] = []) throws -> SoftphoneProcess {
        try SoftphoneProcess("call \(callee)", ["call", callee] + server.clientFlags(as: user) + flags)
    }

    /// Every JSON line so far, as objects (other lines are skipped).
    var events: [[String: Any]] {
        process.lines.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    /// The `event` names so far, in order.
    var eventNames: [String] { events.compactMap { $0["event"] as? String } }

    /// Waits for an event named `name` (already seen ones count) that satisfies `predicate`.
    @discardableResult
    func waitForEvent(_ name: String, timeout: Double, where predicate: @escaping ([String: Any]) -> Bool = { _ in true }) throws -> [String: Any] {
        let line = try process.waitForLine(timeout: timeout, "with event '\(name)'") { line in
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else { return false }
            return object["event"] as? String == name && predicate(object)
        }
        return (try JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
    }

    /// The call's `summary` line, waiting for it.
    func summary(timeout: Double) throws -> [String: Any] { try waitForEvent("summary", timeout: timeout) }

    func waitForExit(timeout: Double) throws -> Int32 { try process.waitForExit(timeout: timeout) }

    var report: String { process.report }
}

extension Array where Element == String {
    /// Whether `expected` occurs in this array in order (other elements may come between).
    func containsInOrder(_ expected: [String]) -> Bool {
        var remaining = expected[...]
        for element in self where element == remaining.first {
            remaining.removeFirst()
            if remaining.isEmpty { return true }
        }
        return remaining.isEmpty
    }
}
