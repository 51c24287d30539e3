import Foundation

/// A child process for end-to-end tests: its standard output collected line by line as it
/// arrives, standard error kept for failure reports, waits bounded in time, and SIGKILL
/// when the test is done with it (or when it is dropped), so no test leaves one behind.
final class ManagedProcess: @unchecked Sendable {
    // `state` is guarded by `lock`; the pipes and the Process are set up in init and
    // only read afterwards. @unchecked because the lock is the synchronisation.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let name: String
    let arguments: [String]
    private let process = Process()
    private let input = Pipe()
    private let lock = NSLock()
    private var outputLines: [String] = []
    private var partialOutput: [UInt8] = []
    private var errorBytes: [UInt8] = []
    private var readersDone = 0
    private let readers = DispatchGroup()

    /// Starts `executable` with `arguments`, and this process's environment with
    /// `environment` laid over it.
    init(name: String, executable: URL, arguments: [String], environment: [String: String] = [:]) throws {
        self.name = name
        self.arguments = arguments
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw Failure(description: "\(executable.path) is not built: run `swift build` before the end-to-end tests (make test does)")
        }
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let output = Pipe(), error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        read(output.fileHandleForReading, isOutput: true)
        read(error.fileHandleForReading, isOutput: false)
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    var processIdentifier: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    /// Every complete line of standard output so far.
    var lines: [String] { lock.withLock { outputLines } }

    /// Standard error so far.
    var errorText: String { lock.withLock { String(decoding: errorBytes, as: UTF8.self) } }

    /// Waits until a line of standard output satisfies `predicate` (lines already seen
    /// count), at most `timeout` seconds.
    @discardableResult
    func waitForLine(timeout: Double, _ what: String, where predicate: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var checked = 0
        while true {
            let current = lines
            if let match = current[checked...].first(where: predicate) { return match }
            checked = current.count
            let outputClosed = lock.withLock { readersDone == 2 }
            if outputClosed || Date() >= deadline {
                throw Failure(description: "\(name): no line \(what) within \(timeout) s\(outputClosed ? " (output closed)" : "")\n" + report)
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// Waits for the process to exit, at most `timeout` seconds; returns its status.
    func waitForExit(timeout: Double) throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() >= deadline { throw Failure(description: "\(name): still running after \(timeout) s\n" + report) }
            Thread.sleep(forTimeInterval: 0.02)
        }
        process.waitUntilExit()
        // The pipes may hold the last lines a moment longer than the process lives.
        _ = readers.wait(timeout: .now() + 2)
        return process.terminationStatus
    }

    /// Writes `text` to the process's standard input.
    func write(_ text: String) {
        try? input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
    }

    func closeInput() { try? input.fileHandleForWriting.close() }

    /// Sends SIGINT, as Ctrl-C in a terminal does.
    func interrupt() {
        if process.isRunning { kill(process.processIdentifier, SIGINT) }
    }

    /// Sends SIGKILL (`kill -9`) and waits for the process to go.
    func killHard() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        // Bounded, not waitUntilExit: Foundation notices the exit late when a grandchild
        // still holds the pipes (the children here have none, but a test must not hang).
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        _ = readers.wait(timeout: .now() + 2)
    }

    /// The command, its output and its standard error, for failure messages.
    var report: String {
        "--- \(name): \(arguments.joined(separator: " "))\n--- stdout:\n" + lines.joined(separator: "\n") + "\n--- stderr:\n" + errorText
    }

    private func read(_ handle: FileHandle, isOutput: Bool) {
        readers.enter()
        let thread = Thread { [self] in
            let descriptor = handle.fileDescriptor
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                append(buffer[..<count], isOutput: isOutput)
            }
            lock.withLock {
                if isOutput && !partialOutput.isEmpty {
                    outputLines.append(String(decoding: partialOutput, as: UTF8.self))
                    partialOutput.removeAll()
                }
                readersDone += 1
            }
            readers.leave()
        }
        thread.start()
    }

    private func append(_ bytes: ArraySlice<UInt8>, isOutput: Bool) {
        lock.withLock {
            guard isOutput else {
                // Bounded: a runaway process cannot eat the test's memory.
                if errorBytes.count < 1 << 20 { errorBytes.append(contentsOf: bytes) }
                return
            }
            for byte in bytes {
                if byte == UInt8(ascii: "\n") {
                    if outputLines.count < 100_000 { outputLines.append(String(decoding: partialOutput, as: UTF8.self)) }
                    partialOutput.removeAll(keepingCapacity: true)
                } else if partialOutput.count < 1 << 16 {
                    partialOutput.append(byte)
                }
            }
        }
    }
}
