import Foundation
import Synchronization

/// A real WebRTC peer (scripts/interop/*.py) run as a child process, spoken to with the
/// line protocol of scripts/interop/README.md.
final class InteropPeerProcess: Sendable {
    struct PeerFailure: Error, CustomStringConvertible {
        let description: String
    }

    static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private let process: Process
    private let input: FileHandle
    /// Messages read so far and whether stdout ended.
    private let inbox = LockedBox<(messages: [[String: any Sendable]], ended: Bool)>(([], false))
    private let stderrTail = LockedBox<[String]>([])
    let recordPath: String

    /// Starts `scripts/interop/<script>` with `arguments` plus `--record` to a temporary file.
    init(script: String, arguments: [String]) throws {
        recordPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("parley-interop-\(UUID().uuidString).wav").path
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.repositoryRoot.appendingPathComponent("scripts/interop/\(script)").path]
            + arguments + ["--record", recordPath]
        let stdinPipe = Pipe()
        let stdoutPipe = Pipe()
        let stderrPipe = Pipe()
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        input = stdinPipe.fileHandleForWriting
        let inbox = self.inbox
        let tail = stderrTail
        try process.run()
        let output = stdoutPipe.fileHandleForReading
        Thread.detachNewThread {
            var buffer = Data()
            while true {
                let chunk = output.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = buffer[buffer.startIndex..<newline]
                    buffer = Data(buffer[(newline + 1)...])
                    if let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] {
                        let message = object.mapValues { Self.sendable($0) }
                        inbox.withLock { $0.messages.append(message) }
                    }
                }
            }
            inbox.withLock { $0.ended = true }
        }
        let errors = stderrPipe.fileHandleForReading
        Thread.detachNewThread {
            var buffer = Data()
            while true {
                let chunk = errors.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer = Data(buffer[(newline + 1)...])
                    tail.withLock { lines in
                        lines.append(line)
                        if lines.count > 40 { lines.removeFirst(lines.count - 40) }
                    }
                }
            }
        }
    }

    private static func sendable(_ value: Any) -> any Sendable {
        switch value {
        case let string as String: return string
        case let number as NSNumber: return number.doubleValue
        case let dictionary as [String: Any]: return dictionary.mapValues { sendable($0) }
        default: return String(describing: value)
        }
    }

    /// The last lines the peer wrote to stderr, for failure messages.
    var log: String { stderrTail.withLock { $0.joined(separator: "\n") } }

    /// The next message of `type`; skips `state` messages unless asked for. Fails on an
    /// `error` message, on exit, or after `timeout`.
    func next(_ type: String, timeout: Duration = .seconds(60)) async throws -> [String: any Sendable] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let (message, ended) = inbox.withLock { box -> ([String: any Sendable]?, Bool) in
                box.messages.isEmpty ? (nil, box.ended) : (box.messages.removeFirst(), false)
            }
            guard let message else {
                if ended { throw PeerFailure(description: "peer exited before sending \(type)\n\(log)") }
                try await Task.sleep(for: .milliseconds(20))
                continue
            }
            let kind = message["type"] as? String
            if kind == "error" { throw PeerFailure(description: "peer error: \(message["message"] ?? "?")\n\(log)") }
            if kind == type { return message }
        }
        throw PeerFailure(description: "no \(type) message from the peer within \(timeout)\n\(log)")
    }

    func send(_ message: [String: String]) throws {
        var data = try JSONSerialization.data(withJSONObject: message)
        data.append(0x0A)
        try input.write(contentsOf: data)
    }

    /// Closes stdin (the peer then exits) and waits up to 10 s before killing it.
    func finish() {
        try? input.close()
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning { process.terminate() }
        try? FileManager.default.removeItem(atPath: recordPath)
    }
}

/// A value behind a lock, shareable between threads.
final class LockedBox<Value: ~Copyable>: Sendable where Value: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: consuming sending Value) { mutex = Mutex(value) }
    func withLock<Result>(_ body: (inout sending Value) throws -> sending Result) rethrows -> sending Result {
        try mutex.withLock(body)
    }
}
