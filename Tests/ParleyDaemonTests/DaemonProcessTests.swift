import Foundation
import Glibc
import ParleyNetCore
import ParleyNetLinux
import Synchronization
import Testing

/// The built `parleyd` binary, run as a user runs it.
@Suite struct DaemonProcessTests {
    @Test func helpIsCompleteAndExitsZero() throws {
        let result = try DaemonProcess.run(["--help"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        for flag in ["--data-dir", "--listen", "--media-ports", "--media-address", "--announce-address", "--ring-timeout",
                     "--media-timeout", "--max-call-length", "--reconnect-grace", "--hello-timeout", "--heartbeat",
                     "--log-level", "--no-dev-app", "--config", "--version", "app create", "app list", "app rotate-secret"] {
            #expect(result.stdout.contains(flag), "\(flag)")
        }
        let version = try DaemonProcess.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("parleyd "))
    }

    @Test func badFlagIsOneLineAndExitTwo() throws {
        let result = try DaemonProcess.run(["--no-such-flag"])
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "parleyd: unknown flag --no-such-flag (see parleyd --help)\n")
        let value = try DaemonProcess.run(["--heartbeat", "often"])
        #expect(value.status == 2)
        #expect(value.stderr.split(separator: "\n").count == 1)
    }

    @Test func appCommandsOnAStore() throws {
        let directory = NSTemporaryDirectory() + "parleyd-app-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let missing = try DaemonProcess.run(["app", "list", "--data-dir", directory])
        #expect(missing.status == 1)
        #expect(missing.stderr.hasPrefix("parleyd: no store at \(directory)/parley.sqlite"))

        let created = try DaemonProcess.run(["app", "create", "--name", "shop", "--data-dir", directory, "--json"])
        #expect(created.status == 0)
        let app = try #require(try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: Any])
        let key = try #require(app["key"] as? String)
        let secret = try #require(app["secret"] as? String)
        #expect(app["name"] as? String == "shop")
        #expect(key.count == 36)
        #expect(secret.count == 44)

        let list = try DaemonProcess.run(["app", "list", "--data-dir", directory, "--json"])
        #expect(list.status == 0)
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
        #expect(listed.count == 1)
        #expect(listed.first?["key"] as? String == key)
        #expect(listed.first?["secret"] == nil)
        #expect(!list.stdout.contains(secret))

        let rotated = try DaemonProcess.run(["app", "rotate-secret", key, "--grace", "60", "--data-dir", directory, "--json"])
        #expect(rotated.status == 0)
        let after = try #require(try JSONSerialization.jsonObject(with: Data(rotated.stdout.utf8)) as? [String: Any])
        let newSecret = try #require(after["secret"] as? String)
        #expect(newSecret != secret)
        #expect(after["previousSecret"] as? String == secret)

        let shown = try DaemonProcess.run(["app", "list", "--data-dir", directory, "--show-secrets"])
        #expect(shown.status == 0)
        #expect(shown.stdout.contains("secret: \(newSecret)"))
        #expect(shown.stdout.contains("previous secret: \(secret)"))

        let unknown = try DaemonProcess.run(["app", "rotate-secret", "no-such-key", "--data-dir", directory])
        #expect(unknown.status == 1)
        #expect(unknown.stderr == "parleyd: application no-such-key not found\n")
    }

    /// Serves on an ephemeral port, answers /healthz, stops on SIGTERM with status 0.
    /// A `--sip-number` rule for an application the store does not have stops the start
    /// with one line and status 1, before anything listens.
    @Test func aNumberRuleForAnUnknownApplicationStopsTheStart() throws {
        let directory = NSTemporaryDirectory() + "parleyd-numbers-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try DaemonProcess.run([
            "--data-dir", directory, "--listen", "127.0.0.1:0", "--sip-listen", "127.0.0.1:0", "--no-dev-app",
            "--sip-number", "+46700000001=no-such-app:user:bob",
        ])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr == "parleyd: --sip-number names an application the store does not have: no-such-app (see parleyd app list)\n")
        #expect(!result.stdout.contains("listening"))
    }

    @Test func serveAnswersAndStopsOnSIGTERM() throws {
        let directory = NSTemporaryDirectory() + "parleyd-serve-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try DaemonProcess.start(["--data-dir", directory, "--listen", "127.0.0.1:0", "--media-ports", "42000-42099"])
        defer { server.kill() }
        let banner = try #require(server.waitForOutput(containing: "parley call bob", timeout: .seconds(20)), "stderr: \(server.stderr)")
        let addressLine = try #require(banner.split(separator: "\n").first { $0.hasPrefix("parleyd listening on http://") })
        let addressText = addressLine.dropFirst("parleyd listening on http://".count).prefix { $0 != " " }
        let address = try SocketAddress(parsing: String(addressText))
        #expect(banner.contains("development application created"))

        let socket = try TCPSocket.connect(to: address, timeout: .seconds(5))
        defer { socket.close() }
        _ = try socket.write(Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while ContinuousClock.now < deadline, !String(decoding: received, as: UTF8.self).contains(#"{"status":"ok"}"#) {
            guard socket.waitUntilReadable(timeout: .milliseconds(200)) else { continue }
            guard case .bytes(let count)? = try? socket.read(into: &buffer) else { break }
            received += buffer[0..<count]
        }
        #expect(String(decoding: received, as: UTF8.self).hasPrefix("HTTP/1.1 200"))

        // An application created beside the running server is usable over REST at once.
        let created = try DaemonProcess.run(["app", "create", "--name", "beside", "--data-dir", directory, "--json"])
        #expect(created.status == 0)
        let app = try #require(try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: Any])
        let credentials = "\(try #require(app["key"] as? String)):\(try #require(app["secret"] as? String))"
        let calls = try httpGet(address, "/v1/calls", authorization: "Basic " + Data(credentials.utf8).base64EncodedString())
        #expect(calls.hasPrefix("HTTP/1.1 200"))
        #expect(calls.hasSuffix(#"{"calls":[]}"#))
        let listed = try DaemonProcess.run(["app", "list", "--data-dir", directory])
        #expect(listed.status == 0)
        #expect(listed.stdout.split(separator: "\n").count == 2)

        let status = server.terminate(timeout: .seconds(15))
        #expect(status == 0)

        // A second start on the same store creates no development application.
        let again = try DaemonProcess.start(["--data-dir", directory, "--listen", "127.0.0.1:0", "--media-ports", "42100-42199"])
        defer { again.kill() }
        let second = try #require(again.waitForOutput(containing: "applications: parleyd app list", timeout: .seconds(20)))
        #expect(!second.contains("development application created"))
        #expect(again.terminate(timeout: .seconds(15)) == 0)
    }
}

/// parleyd when the process is out of descriptors (docs/operations.md, "Descriptors").
@Suite struct DaemonDescriptorLimitTests {
    static let limit = 64
    /// `ServerConfiguration.descriptorHeadroom`'s default.
    static let headroom = 16

    /// Idle keep-alive connections fill the descriptor limit, less the headroom kept free;
    /// a new client then gets 503 (not silence), parleyd stays idle instead of spinning on its listeners, and serves
    /// again once connections close.
    @Test func outOfDescriptorsANewClientGets503AndTheServerStaysIdle() throws {
        let directory = NSTemporaryDirectory() + "parleyd-nofile-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try DaemonProcess.start(["--data-dir", directory, "--listen", "127.0.0.1:0", "--media-ports", "42200-42299"],
                                             descriptorLimit: Self.limit)
        defer { server.kill() }
        let banner = try #require(server.waitForOutput(containing: "parley call bob", timeout: .seconds(20)), "stderr: \(server.stderr)")
        let addressLine = try #require(banner.split(separator: "\n").first { $0.hasPrefix("parleyd listening on http://") })
        let address = try SocketAddress(parsing: String(addressLine.dropFirst("parleyd listening on http://".count).prefix { $0 != " " }))

        var idle: [TCPSocket] = []
        defer { idle.forEach { $0.close() } }
        var refusal: String?
        for _ in 0..<(Self.limit + 10) {
            let socket = try TCPSocket.connect(to: address, timeout: .seconds(5))
            let response = try keepAliveHealthCheck(socket)
            if response.hasPrefix("HTTP/1.1 200") {
                idle.append(socket)
                continue
            }
            refusal = response
            socket.close()
            break
        }
        let refused = try #require(refusal, "no refusal after \(idle.count) connections")
        #expect(refused.hasPrefix("HTTP/1.1 503"), "\(refused)")
        #expect(refused.contains(#"{"code":"unavailable","message":"the server is out of file descriptors; retry later"}"#))
        // What docs/operations.md promises: the limit minus about 30 fixed descriptors and
        // the 16 kept free.
        #expect(idle.count >= Self.limit - 34 - Self.headroom, "only \(idle.count) connections under a limit of \(Self.limit)")
        // Those 16 are free: libdispatch's once-a-second look at its workers opens
        // /proc/TID/stat and kills the process when that fails, which a server that gave
        // its last descriptor to a connection did now and then under load.
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(server.processIdentifier)/fd")
        let high = descriptors.compactMap(Int.init).filter { $0 >= Self.limit - Self.headroom }.sorted().map {
            "\($0) \((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(server.processIdentifier)/fd/\($0)")) ?? "?")"
        }
        #expect(Self.limit - descriptors.count >= Self.headroom - 1, "\(descriptors.count) descriptors in use under a limit of \(Self.limit): \(high)")

        // Full: over a window in which more clients come and are refused, parleyd uses
        // little CPU. A listener retrying accept() in a spin uses a whole core.
        let window = Duration.seconds(2)
        let start = ContinuousClock.now
        let cpuBefore = try #require(server.cpuTime)
        for _ in 0..<5 {
            let socket = try TCPSocket.connect(to: address, timeout: .seconds(5))
            let response = try keepAliveHealthCheck(socket)
            socket.close()
            #expect(response.hasPrefix("HTTP/1.1 503"), "\(response)")
        }
        let rest = window - start.duration(to: .now)
        if rest > .zero { Thread.sleep(forTimeInterval: Double(rest.components.seconds) + Double(rest.components.attoseconds) / 1e18) }
        let used = try #require(server.cpuTime) - cpuBefore
        let elapsed = start.duration(to: .now)
        #expect(used < elapsed / 5, "parleyd used \(used) of CPU in \(elapsed) while out of descriptors")

        // Descriptors back: served again, once parleyd has seen the closes (its loop reads
        // each EOF and closes its side; until then a new client may still get 503).
        for socket in idle.prefix(4) { socket.close() }
        idle.removeFirst(min(4, idle.count))
        var response = ""
        let deadline = ContinuousClock.now + .seconds(10)
        repeat {
            let again = try TCPSocket.connect(to: address, timeout: .seconds(5))
            response = try keepAliveHealthCheck(again)
            again.close()
            if response.hasPrefix("HTTP/1.1 200") { break }
            Thread.sleep(forTimeInterval: 0.05)
        } while ContinuousClock.now < deadline
        #expect(response.hasPrefix("HTTP/1.1 200"), "\(response)")
    }

    /// `GET /healthz` on a kept-alive connection; the response head and body once complete
    /// (or whatever arrived within 5 s).
    private func keepAliveHealthCheck(_ socket: TCPSocket) throws -> String {
        _ = try socket.write(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        reading: while ContinuousClock.now < deadline {
            let text = String(decoding: received, as: UTF8.self)
            if let head = text.range(of: "\r\n\r\n"), text[..<head.lowerBound].contains("Content-Length: "),
               let lengthLine = text[..<head.lowerBound].split(separator: "\r\n").first(where: { $0.hasPrefix("Content-Length: ") }),
               let length = Int(lengthLine.dropFirst("Content-Length: ".count)),
               text.utf8.count - text[..<head.upperBound].utf8.count >= length {
                break
            }
            guard socket.waitUntilReadable(timeout: .milliseconds(200)) else { continue }
            switch try? socket.read(into: &buffer) {
            case .bytes(let count)?: received += buffer[0..<count]
            case .wouldBlock?: continue
            case .endOfStream?, nil: break reading
            }
        }
        return String(decoding: received, as: UTF8.self)
    }
}

/// One HTTP/1.1 GET with `Connection: close`; the raw response once the server closes
/// (at most 10 s).
func httpGet(_ address: SocketAddress, _ target: String, authorization: String) throws -> String {
    let socket = try TCPSocket.connect(to: address, timeout: .seconds(5))
    defer { socket.close() }
    _ = try socket.write(Array("GET \(target) HTTP/1.1\r\nHost: x\r\nAuthorization: \(authorization)\r\nConnection: close\r\n\r\n".utf8))
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    let deadline = ContinuousClock.now.advanced(by: .seconds(10))
    reading: while ContinuousClock.now < deadline {
        guard socket.waitUntilReadable(timeout: .milliseconds(200)) else { continue }
        switch try? socket.read(into: &buffer) {
        case .bytes(let count)?: received += buffer[0..<count]
        case .wouldBlock?: continue
        case .endOfStream?, nil: break reading
        }
    }
    return String(decoding: received, as: UTF8.self)
}

/// Runs the `parleyd` built beside the test bundle.
final class DaemonProcess: Sendable {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    struct TimedOut: Error {}

    static let executable: URL = {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("parleyd"),
            Bundle.main.bundleURL.appendingPathComponent("parleyd"),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("parleyd"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }()

    private let process: Process
    let output = DaemonOutput()
    let errors = DaemonOutput()

    /// With `descriptorLimit`, the process runs with that `RLIMIT_NOFILE` (set by a shell
    /// that then execs parleyd, so the process id stays the same). The shell first closes
    /// every descriptor but the standard three: the test process's other tests leave
    /// sockets without close-on-exec that a child would inherit, and each would take one
    /// of the few the limit allows.
    private init(_ arguments: [String], descriptorLimit: Int? = nil) throws {
        process = Process()
        if let descriptorLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            let closeInherited = #"for f in /proc/$$/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-" 2>/dev/null; done; "#
            process.arguments = ["-c", closeInherited + "ulimit -n \(descriptorLimit) && exec \"$0\" \"$@\"", Self.executable.path] + arguments
        } else {
            process.executableURL = Self.executable
            process.arguments = arguments
        }
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PARLEY_") }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        // A thread per pipe, reading until end of file: Foundation's readabilityHandler on
        // Linux can hand over an empty read before the end, which cut --help's 15 KB short.
        Self.drain(out.fileHandleForReading, into: output)
        Self.drain(err.fileHandleForReading, into: errors)
        try process.run()
    }

    /// Reads `handle` with blocking reads on a thread of its own until end of file, each
    /// chunk appended as it comes (so `waitForOutput` sees a running process's lines).
    private static func drain(_ handle: FileHandle, into output: DaemonOutput) {
        let descriptor = handle.fileDescriptor
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    output.append(Data(buffer[..<count]))
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            output.append(Data())
            withExtendedLifetime(handle) {}
        }
    }

    static func start(_ arguments: [String], descriptorLimit: Int? = nil) throws -> DaemonProcess {
        try DaemonProcess(arguments, descriptorLimit: descriptorLimit)
    }

    var processIdentifier: Int32 { process.processIdentifier }

    /// CPU time the process used so far (user plus system, from `/proc/PID/stat`), nil if
    /// it cannot be read.
    var cpuTime: Duration? {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let end = stat.lastIndex(of: ")") else { return nil }
        // After "pid (comm)": state is field 3, utime 14 and stime 15 of proc(5).
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Int64(fields[11]), let system = Int64(fields[12]) else { return nil }
        let ticksPerSecond = Int64(sysconf(Int32(_SC_CLK_TCK)))
        return .milliseconds((user + system) * 1000 / max(ticksPerSecond, 1))
    }

    /// Runs to completion (at most `timeout`) and returns status and output.
    static func run(_ arguments: [String], timeout: Duration = .seconds(30)) throws -> Result {
        let running = try DaemonProcess(arguments)
        guard let status = running.wait(timeout: timeout) else {
            running.kill()
            throw TimedOut()
        }
        // Until both pipes reached their end: the reading threads may lag the exit by
        // far more than a moment on a loaded machine.
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while !(running.output.isFinished && running.errors.isFinished), ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        return Result(status: status, stdout: running.stdout, stderr: running.stderr)
    }

    var stdout: String { output.text }
    var stderr: String { errors.text }

    func waitForOutput(containing text: String, timeout: Duration) -> String? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            let now = stdout
            if now.contains(text) { return now }
            if !process.isRunning { return nil }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return nil
    }

    /// The exit status, or nil if still running after `timeout`.
    func wait(timeout: Duration) -> Int32? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while process.isRunning, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// SIGTERM, then the exit status (nil if it did not stop within `timeout`).
    func terminate(timeout: Duration) -> Int32? {
        process.terminate()
        return wait(timeout: timeout)
    }

    func kill() {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
    }
}

/// Bytes from a pipe, appended by its reading thread.
final class DaemonOutput: Sendable {
    private let bytes = Mutex<(bytes: [UInt8], finished: Bool)>(([], false))
    /// Appends `data`; empty data is the end of file.
    func append(_ data: Data) { bytes.withLock { if data.isEmpty { $0.finished = true } else { $0.bytes += data } } }
    var text: String { String(decoding: bytes.withLock { $0.bytes }, as: UTF8.self) }
    /// The pipe reached its end.
    var isFinished: Bool { bytes.withLock { $0.finished } }
}
