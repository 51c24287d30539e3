import Foundation
import Glibc
import ParleyNetCore

/// The server under load: the `parleyd` executable built next to this one
/// (`swift build -c release --product parleyd`), as a child process, so that its CPU and
/// memory are read from /proc apart from the load generator's. It runs with its defaults
/// (log level info to a file, one edge loop per core) on a store in a fresh temporary
/// directory holding one application, made by `parleyd app create --json`.
final class ServerUnderTest {
    let child: ChildProcess
    let address: SocketAddress
    let credentials: BenchCredentials
    let dataDirectory: String

    /// UDP ports of the server's media legs: below Linux's ephemeral range (32768-60999),
    /// where the device legs of the bench bind, so the two never compete.
    static let mediaPorts: ClosedRange<UInt16> = 10_000...11_999

    /// `parleyd` in the directory of this executable.
    static var executable: String? {
        guard let me = currentExecutablePath(), let slash = me.lastIndex(of: "/") else { return nil }
        let path = String(me[..<slash]) + "/parleyd"
        return access(path, X_OK) == 0 ? path : nil
    }

    /// - Parameters:
    ///   - extraArguments: more `parleyd` flags (the push bench's emulator URLs, the speech
    ///     bench's media and announce addresses).
    ///   - mediaPorts: the media port range (the speech bench's impairment relay stands in
    ///     front of every port of a small one).
    ///   - applicationSettings: `parleyd app` commands run on the application before the
    ///     server starts, each as `[command, arguments...]`, the key put after the command
    ///     (the SIP bench's `set-dialling` and `set-cli`).
    ///   - applicationArguments: more `parleyd` flags that name the application, made from
    ///     its key (the conference bench's `--sip-number NUMBER=KEY:conference:ROOM`, the SIP bridge row's `--sip-number`).
    init(extraArguments: [String] = [], mediaPorts: ClosedRange<UInt16> = ServerUnderTest.mediaPorts,
         applicationSettings: [[String]] = [], applicationArguments: (String) -> [String] = { _ in [] }) throws {
        guard let executable = Self.executable else {
            throw ChildProcess.Failure(description: "parleyd not found next to ParleyBench: swift build -c release --product parleyd")
        }
        dataDirectory = try makeBenchDirectory("parley-bench-server")
        credentials = try Self.createApplication(executable, dataDirectory)
        for command in applicationSettings where !command.isEmpty {
            try Self.admin(executable, [command[0], credentials.key] + command.dropFirst(), dataDirectory)
        }
        child = try ChildProcess(
            path: executable,
            arguments: ["--data-dir", dataDirectory, "--listen", "127.0.0.1:0",
                        "--media-ports", "\(mediaPorts.lowerBound)-\(mediaPorts.upperBound)", "--no-dev-app"] + extraArguments
                + applicationArguments(credentials.key),
            pipeStdin: false, pipeStdout: true, stderrPath: dataDirectory + "/server.log")
        // parleyd's banner: "parleyd listening on http://127.0.0.1:PORT (signaling ...)".
        var found: SocketAddress?
        for _ in 0..<20 {
            guard let line = child.readLine(timeoutMs: 10_000) else { break }
            if let range = line.range(of: "listening on http://") {
                let rest = line[range.upperBound...].prefix { $0 != " " }
                found = try? SocketAddress(parsing: String(rest))
                break
            }
        }
        guard let found else {
            child.terminate()
            throw ChildProcess.Failure(description: "parleyd did not start (log: \(dataDirectory)/server.log)")
        }
        address = found
    }

    /// `parleyd app create --json`: its key and secret.
    private static func createApplication(_ executable: String, _ dataDirectory: String) throws -> BenchCredentials {
        let admin = try ChildProcess(path: executable, arguments: ["app", "create", "--name", "bench", "--data-dir", dataDirectory, "--json"],
                                     pipeStdin: false, pipeStdout: true)
        var output = ""
        for _ in 0..<100 {
            guard let line = admin.readLine(timeoutMs: 10_000) else { break }
            output += line
        }
        admin.waitExit(timeoutMs: 5000)
        guard let object = try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any],
              let key = object["key"] as? String, let secret = object["secret"] as? String else {
            throw ChildProcess.Failure(description: "parleyd app create --json printed no key and secret: \(output)")
        }
        return BenchCredentials(key: key, secret: secret)
    }

    /// `parleyd app ARGUMENTS --data-dir DIR`; throws unless it exits 0 within 10 s.
    private static func admin(_ executable: String, _ arguments: [String], _ dataDirectory: String) throws {
        let admin = try ChildProcess(path: executable, arguments: ["app"] + arguments + ["--data-dir", dataDirectory],
                                     pipeStdin: false, pipeStdout: false, stderrPath: dataDirectory + "/admin.log")
        guard let status = admin.waitExitStatus(timeoutMs: 10_000), status == 0 else {
            throw ChildProcess.Failure(description: "parleyd app \(arguments.joined(separator: " ")) failed (\(dataDirectory)/admin.log)")
        }
    }

    /// User plus system CPU seconds of the server process, every thread.
    func cpuSeconds() -> Double { child.cpuSeconds() ?? .nan }

    /// Resident set size of the server process in KiB (VmRSS of /proc/<pid>/status).
    func residentKiB() -> Double { processResidentKiB(child.pid) ?? .nan }

    /// SIGTERM (parleyd shuts down cleanly), then removes the data directory.
    func stop() {
        child.terminate()
        if ProcessInfo.processInfo.environment["PARLEY_SERVER_KEEP"] == nil { try? FileManager.default.removeItem(atPath: dataDirectory) }
    }
}

/// CPU seconds of each thread of `pid`, summed by thread name (/proc/<pid>/task/*/comm and stat).
func threadCPUSecondsByName(_ pid: pid_t) -> [String: Double] {
    var totals: [String: Double] = [:]
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    for task in tasks.prefix(4096) {
        guard let tid = pid_t(task), let seconds = processCPUSeconds(tid, task: pid) else { continue }
        var name = readSmallFile("/proc/\(pid)/task/\(task)/comm")?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
        // Dispatch's worker threads (the store's queues among them) carry a truncated
        // "com.apple.root.*-qos*" name.
        if name.contains("qos") { name = "dispatch-workers" }
        totals[name, default: 0] += seconds
    }
    return totals
}

/// The busiest thread names between two `threadCPUSecondsByName` samples, as cores over `seconds`.
func busiestThreads(before: [String: Double], after: [String: Double], seconds: Double, count: Int = 3) -> String {
    let used = after.map { (name: $0.key, cores: ($0.value - (before[$0.key] ?? 0)) / seconds) }
    return used.sorted { $0.cores > $1.cores }.prefix(count).map { "\($0.name) \(fixed($0.cores, 2))" }.joined(separator: ", ")
}

/// VmRSS of /proc/<pid>/status, in KiB.
func processResidentKiB(_ pid: pid_t) -> Double? {
    guard let text = readSmallFile("/proc/\(pid)/status") else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return line.split(separator: " ").dropFirst().first.flatMap { Double($0) }
    }
    return nil
}

/// Raises this process's open-file limit (inherited by the server child) to at least
/// `wanted`, past the hard limit when allowed (root). Returns the soft limit in force.
@discardableResult
func raiseOpenFileLimit(to wanted: rlim_t) -> rlim_t {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    guard limit.rlim_cur < wanted else { return limit.rlim_cur }
    var raised = rlimit(rlim_cur: wanted, rlim_max: max(wanted, limit.rlim_max))
    if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) != 0 {
        raised = rlimit(rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max)
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised)
    }
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    return limit.rlim_cur
}
