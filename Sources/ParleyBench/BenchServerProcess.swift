import Glibc
import ParleyAuth
import ParleyNet
import ParleyStore

/// The server under load: `ParleyBench server-serve` (BenchServerServe.swift, a
/// `ParleyServer` with parleyd's flags) as a child process, so that its CPU and memory are
/// read from /proc apart from the load generator's. Its store lives in a fresh temporary
/// directory holding one application, created before the start like `parleyd app create`.
final class ServerUnderTest {
    let child: ChildProcess
    let address: SocketAddress
    let credentials: BenchCredentials
    let dataDirectory: String

    /// UDP ports of the server's media legs: below Linux's ephemeral range (32768-60999),
    /// where the device legs of the bench bind, so the two never compete.
    static let mediaPorts: ClosedRange<UInt16> = 10_000...11_999

    init() throws {
        var template = Array("/tmp/parley-bench-server-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw ChildProcess.Failure(description: "cannot create a temporary data directory")
        }
        dataDirectory = String(cString: made)
        let generated = try ApplicationCredentials.generate()
        do {
            let store = try SQLiteStore(path: dataDirectory + "/parley.sqlite")
            _ = try store.createApplication(key: generated.key, name: "bench", secret: generated.secret.base64, at: Int64(time(nil)) * 1000)
        }
        credentials = BenchCredentials(key: generated.key, secret: generated.secret.base64)
        guard let executable = currentExecutablePath() else { throw ChildProcess.Failure(description: "cannot find this executable") }
        child = try ChildProcess(
            path: executable,
            arguments: ["server-serve", "--data-dir", dataDirectory, "--listen", "127.0.0.1:0",
                        "--media-ports", "\(Self.mediaPorts.lowerBound)-\(Self.mediaPorts.upperBound)", "--no-dev-app"],
            pipeStdin: true, pipeStdout: true, stderrPath: dataDirectory + "/server.log")
        // The banner line parleyd prints: "parleyd listening on http://127.0.0.1:PORT (...)".
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
            throw ChildProcess.Failure(description: "the server did not start (log: \(dataDirectory)/server.log)")
        }
        address = found
    }

    /// User plus system CPU seconds of the server process, every thread.
    func cpuSeconds() -> Double { child.cpuSeconds() ?? .nan }

    /// Resident set size of the server process in KiB (VmRSS of /proc/<pid>/status).
    func residentKiB() -> Double { processResidentKiB(child.pid) ?? .nan }

    func stop() {
        child.closeInput()
        if !child.waitExit(timeoutMs: 5000) { child.terminate() }
        _ = unlink(dataDirectory + "/parley.sqlite")
        _ = unlink(dataDirectory + "/parley.sqlite-wal")
        _ = unlink(dataDirectory + "/parley.sqlite-shm")
        _ = unlink(dataDirectory + "/server.log")
        _ = rmdir(dataDirectory)
    }
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
