import Foundation
import Testing

/// The harness itself, on /bin/sh: lines arrive as written, waits end at their bound,
/// SIGINT and SIGKILL reach the child. Runs without parleyd.
@Suite struct ManagedProcessTests {
    static let shell = URL(fileURLWithPath: "/bin/sh")

    @Test func linesAndExitStatus() throws {
        let process = try ManagedProcess(name: "sh", executable: Self.shell, arguments: ["-c", "echo one; sleep 0.2; printf 'two\\nthree'; exit 3"])
        #expect(try process.waitForLine(timeout: 5, "two") { $0 == "two" } == "two")
        #expect(try process.waitForExit(timeout: 5) == 3)
        #expect(process.lines == ["one", "two", "three"], "an unterminated last line still counts")
    }

    @Test func waitsAreBounded() throws {
        let process = try ManagedProcess(name: "sh", executable: Self.shell, arguments: ["-c", "exec sleep 30"])
        let started = Date()
        #expect(throws: ManagedProcess.Failure.self) { try process.waitForLine(timeout: 0.3, "never") { _ in true } }
        #expect(throws: ManagedProcess.Failure.self) { try process.waitForExit(timeout: 0.3) }
        #expect(Date().timeIntervalSince(started) < 5)
        process.killHard()
        #expect(!process.isRunning)
    }

    @Test func closedOutputEndsAWaitAtOnce() throws {
        let process = try ManagedProcess(name: "sh", executable: Self.shell, arguments: ["-c", "echo done"])
        let started = Date()
        #expect(throws: ManagedProcess.Failure.self) { try process.waitForLine(timeout: 20, "never") { $0 == "other" } }
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test func inputAndInterrupt() throws {
        let process = try ManagedProcess(name: "sh", executable: Self.shell, arguments: ["-c", "trap 'echo interrupted; exit 130' INT; read line; echo got $line; while true; do sleep 0.05; done"])
        process.write("hello\n")
        try process.waitForLine(timeout: 5, "got hello") { $0 == "got hello" }
        process.interrupt()
        #expect(try process.waitForExit(timeout: 5) == 130)
        #expect(process.lines.last == "interrupted")
    }

    @Test func missingExecutableSaysToBuild() {
        #expect(throws: ManagedProcess.Failure.self) {
            try ManagedProcess(name: "none", executable: URL(fileURLWithPath: "/nonexistent/parleyd"), arguments: [])
        }
    }

    @Test func orderedContainment() {
        #expect(["a", "x", "b", "c"].containsInOrder(["a", "b", "c"]))
        #expect(!["b", "a"].containsInOrder(["a", "b"]))
        #expect(["a"].containsInOrder([]))
    }
}
