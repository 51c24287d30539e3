import Foundation
import Glibc
import ParleyNetCore
import ParleyNetLinux

/// SIPp (Debian's `sip-tester`) as a child process of the `sip` group, with one of its
/// built-in scenarios on loopback over UDP: `uas` (answers 180 then 200 with a PCMU offer,
/// waits for the BYE; `-rtp_echo` sends back every RTP packet it receives to where it came
/// from) or `uac` (INVITE, 200, ACK, BYE, at a call rate, calls of `-d` milliseconds).
/// Its statistics go to a file (`-trace_stat`), its screen to /dev/null.
final class SIPpProcess {
    let child: ChildProcess
    /// The SIP port it listens on.
    let port: UInt16
    /// Where `-trace_stat` writes (`SIPpStatistics`).
    let statisticsPath: String
    let directory: String

    static var executable: String? {
        ["/usr/bin/sipp", "/usr/local/bin/sipp"].first { access($0, X_OK) == 0 }
    }

    /// A uas on a free loopback port that answers every call (no `-m`: it runs until
    /// stopped), echoing RTP when asked.
    static func uas(echo: Bool, directory: String) throws -> SIPpProcess {
        let media = try freeMediaPort()
        return try SIPpProcess(scenario: "uas", directory: directory, extra: ["-mp", String(media)] + (echo ? ["-rtp_echo"] : []))
    }

    /// A uac that places `calls` calls of `durationMs` toward `target` at `rate` calls per
    /// second and exits when they are done (or after `timeoutSeconds`); its Request-URI's
    /// user is `service` (SIPp's `-s`, `service` by default).
    static func uac(target: String, rate: Int, calls: Int, durationMs: Int, timeoutSeconds: Int, directory: String,
                    service: String? = nil) throws -> SIPpProcess {
        try SIPpProcess(scenario: "uac", directory: directory,
                        extra: (service.map { ["-s", $0] } ?? []) + ["-r", String(rate), "-rp", "1000", "-m", String(calls), "-d", String(durationMs),
                                "-l", String(max(100, rate * 4)), "-timeout", String(timeoutSeconds), "-mp", String(try freeMediaPort()),
                                target])
    }

    private init(scenario: String, directory: String, extra: [String]) throws {
        guard let executable = Self.executable else {
            throw ChildProcess.Failure(description: "SIPp not found (Debian package sip-tester; scripts/install-deps.sh installs it)")
        }
        self.directory = directory
        port = try freeLoopbackPort()
        statisticsPath = directory + "/sipp-\(scenario)-\(port).csv"
        child = try ChildProcess(
            path: executable,
            arguments: ["-sn", scenario, "-i", "127.0.0.1", "-p", String(port), "-t", "u1", "-nostdin", "-trace_stat", "-stf", statisticsPath,
                        "-fd", "1", "-trace_err", "-error_file", directory + "/sipp-\(scenario)-\(port)-errors.log"] + extra,
            pipeStdin: false, pipeStdout: false, stderrPath: directory + "/sipp-\(scenario)-\(port).stderr")
        // SIPp binds its sockets after reading the scenario: a uas must be listening before
        // the first INVITE goes to it.
        usleep(300_000)
    }

    /// `127.0.0.1:PORT`.
    var address: String { "127.0.0.1:\(port)" }

    /// User plus system CPU seconds of SIPp (all its threads, the RTP echo's included).
    func cpuSeconds() -> Double { child.cpuSeconds() ?? .nan }

    /// Waits for a uac to finish its calls; false when it is still running after `timeoutMs`.
    func waitForExit(timeoutMs: Int) -> Bool { child.waitExit(timeoutMs: timeoutMs) }

    /// The last row of its statistics file (SIPp writes one as it exits).
    func statistics() throws -> SIPpStatistics {
        guard let text = try? String(contentsOfFile: statisticsPath, encoding: .utf8) else {
            throw SIPpStatistics.Failure(description: "no statistics file \(statisticsPath)")
        }
        return try SIPpStatistics(csv: text)
    }

    func stop() { child.terminate() }
}

/// A loopback UDP port free now (bound, read and closed: another process may take it
/// before SIPp does, which then fails to start and says so).
func freeLoopbackPort() throws -> UInt16 {
    let socket = try UDPSocket(bindingTo: .ipv4Loopback(port: 0))
    defer { socket.close() }
    return socket.localAddress.port
}

/// A free even port whose next two are free as well: SIPp's RTP echo binds the port and
/// the one two above it (video), and RTCP would be the one above.
private func freeMediaPort() throws -> UInt16 {
    for _ in 0..<50 {
        let port = try freeLoopbackPort() & ~1
        guard port < 65_000 else { continue }
        let sockets = (0..<3).compactMap { try? UDPSocket(bindingTo: .ipv4Loopback(port: port + UInt16($0))) }
        sockets.forEach { $0.close() }
        if sockets.count == 3 { return port }
    }
    throw ChildProcess.Failure(description: "no three free UDP ports in a row for SIPp's media")
}

/// A fresh directory under /tmp for one row's files.
func makeBenchDirectory(_ prefix: String) throws -> String {
    var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        throw ChildProcess.Failure(description: "cannot create a temporary directory")
    }
    return String(cString: made)
}
