import Foundation
import Glibc

/// Kamailio (Debian's `kamailio`) as the peer of the `sip` group: a transaction-stateful
/// proxy (tm, sl, rr, maxfwd; scripts/bench/kamailio-proxy.cfg) on a free loopback port,
/// relaying every request to `uas`. It forks its UDP workers and timer processes, so its
/// CPU is that of the whole process tree (`ProcStat.treeCPUSeconds`).
final class KamailioProxy {
    let child: ChildProcess
    let port: UInt16
    /// UDP worker processes (`children`).
    let workers: Int
    /// The memory manager of its shared and private memory (`-x`, `-X`).
    let allocator: String

    static var executable: String? {
        ["/usr/sbin/kamailio", "/usr/local/sbin/kamailio"].first { access($0, X_OK) == 0 }
    }

    static let modulesDirectory = "/usr/lib/x86_64-linux-gnu/kamailio/modules"

    /// scripts/bench/kamailio-proxy.cfg of this checkout.
    static var configuration: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/bench/kamailio-proxy.cfg").path
    }

    /// - Parameters:
    ///   - uas: `HOST:PORT` every request is relayed to.
    ///   - workers: UDP worker processes.
    ///   - allocator: `qm` (Kamailio's default, its debugging allocator: it checks every
    ///     block and costs about twice the CPU per call here), `fm` or `tlsf`.
    ///   - directory: its runtime directory (control files) and its log.
    init(uas: String, workers: Int, allocator: String, directory: String) throws {
        guard let executable = Self.executable else {
            throw ChildProcess.Failure(description: "kamailio not found (Debian package kamailio; scripts/install-deps.sh installs it)")
        }
        guard access(Self.configuration, R_OK) == 0 else { throw ChildProcess.Failure(description: "no \(Self.configuration)") }
        self.workers = workers
        self.allocator = allocator
        port = try freeLoopbackPort()
        let log = directory + "/kamailio.log"
        // setsid(1) execs Kamailio in a session and process group of its own (it does not
        // fork: the spawned child is no group leader), so whatever Kamailio signals as a
        // group at shutdown is its own processes, never the bench. -DD: no daemon, stay in
        // the foreground as the parent of the workers; -E: log to stderr.
        child = try ChildProcess(
            path: "/usr/bin/setsid",
            arguments: [executable, "-DD", "-E", "-f", Self.configuration, "-L", Self.modulesDirectory, "-Y", directory,
                        "-l", "udp:127.0.0.1:\(port)", "-A", "UAS=\"sip:\(uas)\"", "-A", "CHILDREN=\(workers)",
                        "-x", allocator, "-X", allocator, "-m", "256", "-M", "8"],
            pipeStdin: false, pipeStdout: false, stderrPath: log)
        // Its workers are up when the tree has the main process, the workers and the timers.
        for _ in 0..<50 {
            usleep(100_000)
            if ProcStat.treeProcessCount(root: child.pid) >= workers + 2 { break }
        }
        usleep(300_000)
        guard !child.waitExit(timeoutMs: 1) else {
            throw ChildProcess.Failure(description: "kamailio exited at start (log: \(log))")
        }
    }

    /// `127.0.0.1:PORT`.
    var address: String { "127.0.0.1:\(port)" }

    /// User plus system CPU seconds of Kamailio and every process it forked.
    func cpuSeconds() -> Double { ProcStat.treeCPUSeconds(root: child.pid) }

    /// SIGTERM to the main process (it stops its workers), SIGKILL after a second.
    func stop() { child.terminate() }
}
