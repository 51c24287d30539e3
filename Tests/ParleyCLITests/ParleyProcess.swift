import Foundation

/// Runs the built `parley` executable as a separate process, as a user would.
struct ParleyProcess {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// The `parley` binary built next to this test bundle.
    static let executable: URL = {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("parley"),
            Bundle.main.bundleURL.appendingPathComponent("parley"),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("parley"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }()

    /// The repository's shared test fixtures directory (`Tests/Fixtures`).
    static let fixtures: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func run(_ arguments: [String], stdin: [UInt8] = [], timeout: TimeInterval = 20) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let input = Pipe(), output = Pipe(), error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Write stdin on another thread so a large input cannot deadlock against a full stdout pipe.
        let writer = Thread {
            input.fileHandleForWriting.write(Data(stdin))
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let outData = LockedData(), errData = LockedData()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { outData.set(output.fileHandleForReading.readDataToEndOfFile()); group.leave() }
        group.enter()
        DispatchQueue.global().async { errData.set(error.fileHandleForReading.readDataToEndOfFile()); group.leave() }
        if group.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            throw TimedOut(arguments: arguments)
        }
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: outData.get(), as: UTF8.self),
            stderr: String(decoding: errData.get(), as: UTF8.self)
        )
    }

    struct TimedOut: Error { let arguments: [String] }
}

/// Data written by one thread and read by another after a DispatchGroup wait.
final class LockedData: @unchecked Sendable {
    // Guarded by `lock`; @unchecked because NSLock is the synchronisation.
    private var data = Data()
    private let lock = NSLock()
    func set(_ value: Data) { lock.lock(); data = value; lock.unlock() }
    func get() -> Data { lock.lock(); defer { lock.unlock() }; return data }
}
