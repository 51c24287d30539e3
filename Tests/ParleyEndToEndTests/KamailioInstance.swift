import Foundation
import ParleyNetCore
import ParleySIP

/// Kamailio as the SIP trunk in front of a phone (scripts/kamailio/trunk.cfg.in): a
/// stateful proxy on a free loopback UDP port that challenges INVITEs to phone numbers
/// with a digest for one account, record-routes every dialog and relays the INVITEs to
/// the phone at `phonePort`. Its request log ("trunk: METHOD URI from IP:PORT") is read
/// from its standard error.
///
/// Kamailio forks worker processes that outlive a SIGKILL of the main one: `stop()` kills
/// them too.
final class KamailioInstance: @unchecked Sendable {
    // Used from one test's thread; ManagedProcess synchronises itself.
    let process: ManagedProcess
    let port: UInt16
    let configuration: URL
    let runtime: URL

    /// Writes the configuration and starts Kamailio; returns once it answers requests.
    /// - Parameters:
    ///   - phonePort: the UDP port on 127.0.0.1 of the phone INVITEs are relayed to.
    ///   - algorithm: the digest algorithm of the challenges (`MD5`, `SHA-256`).
    init(phonePort: UInt16, user: String, password: String, realm: String = "trunk.test", algorithm: String = "SHA-256") throws {
        port = try ParleydInstance.freeLoopbackPort()
        let template = EndToEndSIPTests.repository.appendingPathComponent("scripts/kamailio/trunk.cfg.in")
        var text = try String(contentsOf: template, encoding: .utf8)
        let values = ["LISTEN_PORT": String(port), "PHONE_PORT": String(phonePort), "USER": user, "PASSWORD": password,
                      "REALM": realm, "ALGORITHM": algorithm]
        for (name, value) in values { text = text.replacingOccurrences(of: "@\(name)@", with: value) }
        configuration = FileManager.default.temporaryDirectory.appendingPathComponent("parley-kamailio-\(UUID().uuidString).cfg")
        try text.write(to: configuration, atomically: true, encoding: .utf8)
        // Its own runtime directory (-Y), so it shares nothing with another Kamailio.
        runtime = FileManager.default.temporaryDirectory.appendingPathComponent("parley-kamailio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        process = try ManagedProcess(name: "kamailio", executable: try Self.executable(),
                                     arguments: ["-DD", "-E", "-m", "32", "-M", "4", "-Y", runtime.path, "-L", try Self.modules(),
                                                 "-f", configuration.path])
        try waitUntilAnswering(timeout: 10)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: configuration)
        try? FileManager.default.removeItem(at: runtime)
    }

    /// `127.0.0.1:PORT`, for `--sip-trunk` and `--sip-route`.
    var address: String { "127.0.0.1:\(port)" }

    /// The requests it received, as its configuration logs them: `METHOD URI from IP:PORT`
    /// (and `challenge ...`, `authenticated USER`), in order.
    var requestLog: [String] {
        process.errorText.split(separator: "\n").compactMap { line in
            line.range(of: "trunk: ").map { String(line[$0.upperBound...]) }
        }
    }

    /// Stops Kamailio and its workers with SIGKILL: it keeps nothing worth a clean exit, and
    /// SIGTERM would stay pending (the test's threads block it, and a child started with
    /// Foundation's Process inherits that mask; Kamailio does not unblock it).
    func stop() {
        let pid = process.processIdentifier
        if Self.isAlive(pid) {
            let workers = Self.children(of: pid)
            kill(pid, SIGKILL)
            // Only a process still running this very configuration: a pid may be reused.
            for worker in workers where Self.commandLine(of: worker).contains(configuration.path) { kill(worker, SIGKILL) }
        }
        process.killHard()
    }

    /// What Kamailio printed, for a failed expectation.
    var report: String { process.report }

    /// Sends OPTIONS (answered 405 by the configuration) until an answer comes: the
    /// workers are up.
    private func waitUntilAnswering(timeout: Double) throws {
        let peer = try UDPPeer()
        let deadline = Date().addingTimeInterval(timeout)
        var attempt = 0
        while Date() < deadline {
            guard process.isRunning else { throw ManagedProcess.Failure(description: "kamailio exited\n" + process.report) }
            attempt += 1
            let request = options(callID: "kamailio-ready-\(attempt)-\(port)", via: peer.address.description)
            try peer.send(request, to: .ipv4Loopback(port: port))
            if let answer = try peer.receiveMessage(timeout: .milliseconds(200)), !answer.isRequest { return }
        }
        throw ManagedProcess.Failure(description: "kamailio did not answer on \(address) within \(timeout) s\n" + process.report)
    }

    /// Whether `pid` runs (a zombie waiting to be reaped does not).
    private static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(after: close)...].split(separator: " ").first
        return state != "Z" && state != "X"
    }

    /// The processes whose parent is `pid` (from /proc).
    private static func children(of pid: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { candidate in
            guard let stat = try? String(contentsOfFile: "/proc/\(candidate)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            // After "pid (comm)": state, then the parent's pid.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == pid
        }
    }

    private static func commandLine(of pid: Int32) -> String {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return "" }
        return String(decoding: data.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }

    /// Debian's module directory for this machine's architecture.
    private static func modules() throws -> String {
        let candidates = ["x86_64-linux-gnu", "aarch64-linux-gnu", "arm-linux-gnueabihf", "i386-linux-gnu"]
            .map { "/usr/lib/\($0)/kamailio/modules" } + ["/usr/lib/kamailio/modules", "/usr/local/lib64/kamailio/modules"]
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0 + "/tm.so") }) else {
            throw ManagedProcess.Failure(description: "no Kamailio modules (tm.so) in \(candidates)")
        }
        return found
    }

    private static func executable() throws -> URL {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin") + ":/usr/sbin:/sbin"
        let candidates = path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("kamailio") }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw ManagedProcess.Failure(description: "kamailio is not installed: scripts/install-deps.sh installs it (Debian's kamailio)")
        }
        return found
    }
}
