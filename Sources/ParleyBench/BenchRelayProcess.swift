import Glibc

// Child processes for the relay comparison: both relays (ours and rtpengine) run as their
// own process, so both are measured the same way, from /proc/<pid>/stat.

/// A child process with its stdin and stdout on pipes (when asked for).
final class ChildProcess {
    let pid: pid_t
    /// Write end of the child's stdin, or -1.
    private(set) var input: Int32
    /// Read end of the child's stdout, or -1.
    private(set) var output: Int32
    private var exited = false
    private var pending: [UInt8] = []

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts `path` with `arguments` (argv[0] is `path`). Without `pipeStdout` the child's
    /// stdout and stderr go to /dev/null.
    init(path: String, arguments: [String], pipeStdin: Bool, pipeStdout: Bool, stderrPath: String = "/dev/null") throws {
        var stdinPipe: [Int32] = [-1, -1]
        var stdoutPipe: [Int32] = [-1, -1]
        // Close-on-exec, so the child keeps only the ends dup2'ed onto its stdin and stdout
        // (holding the write end of its own stdin, it would never see end of input).
        func makePipe(_ ends: inout [Int32]) throws {
            guard pipe(&ends) == 0 else { throw Failure(description: "pipe failed") }
            for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        if pipeStdin { try makePipe(&stdinPipe) }
        if pipeStdout { try makePipe(&stdoutPipe) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if pipeStdin { posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0) } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        if pipeStdout { posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1) } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = [strdup("PATH=/usr/sbin:/usr/bin:/sbin:/bin"), nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var child = pid_t()
        let status = posix_spawn(&child, path, &actions, nil, argv, envp)
        if pipeStdin { close(stdinPipe[0]) }
        if pipeStdout { close(stdoutPipe[1]) }
        guard status == 0 else {
            if pipeStdin { close(stdinPipe[1]) }
            if pipeStdout { close(stdoutPipe[0]) }
            throw Failure(description: "cannot start \(path): \(String(cString: strerror(status)))")
        }
        pid = child
        input = stdinPipe[1]
        output = stdoutPipe[0]
    }

    deinit {
        closeInput()
        if output >= 0 { close(output) }
        terminate()
    }

    /// Writes `text` to the child's stdin.
    func write(_ text: String) {
        guard input >= 0 else { return }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(input, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            bytes = bytes.dropFirst(n)
        }
    }

    func closeInput() {
        if input >= 0 { close(input) }
        input = -1
    }

    /// The next line the child writes to stdout, waiting at most `timeoutMs`.
    func readLine(timeoutMs: Int32) -> String? {
        guard output >= 0 else { return nil }
        var waited: Int32 = 0
        while true {
            if let newline = pending.firstIndex(of: 10) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeFirst(newline + 1)
                return line
            }
            guard waited < timeoutMs else { return nil }
            var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, 50) <= 0 {
                waited += 50
                continue
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            pending += chunk[..<n]
        }
    }

    /// Waits up to `timeoutMs` for the child to exit by itself.
    @discardableResult
    func waitExit(timeoutMs: Int) -> Bool {
        guard !exited else { return true }
        var status: Int32 = 0
        for _ in 0..<max(1, timeoutMs / 10) {
            if waitpid(pid, &status, WNOHANG) == pid {
                exited = true
                return true
            }
            usleep(10_000)
        }
        return false
    }

    /// Waits up to `timeoutMs` for the child to exit by itself; its exit status (the
    /// signal's number plus 128 when a signal ended it), or nil while it runs or when it
    /// was reaped before.
    func waitExitStatus(timeoutMs: Int) -> Int32? {
        guard !exited else { return nil }
        var status: Int32 = 0
        for _ in 0..<max(1, timeoutMs / 10) {
            if waitpid(pid, &status, WNOHANG) == pid {
                exited = true
                // The <sys/wait.h> macros do not import: the low 7 bits are the signal,
                // 0 for a normal exit whose status is in the next byte.
                let signal = status & 0x7f
                return signal == 0 ? (status >> 8) & 0xff : 128 + signal
            }
            usleep(10_000)
        }
        return nil
    }

    /// SIGTERM, then SIGKILL after a second; reaps the child.
    func terminate() {
        guard !exited else { return }
        kill(pid, SIGTERM)
        if !waitExit(timeoutMs: 1000) {
            kill(pid, SIGKILL)
            waitExit(timeoutMs: 1000)
        }
    }

    /// User plus system CPU time of the whole process (every thread), from /proc/<pid>/stat.
    func cpuSeconds() -> Double? { processCPUSeconds(pid) }
}

/// utime + stime (fields 14 and 15) of /proc/<pid>/stat, in seconds. The counters are kept
/// in clock ticks (`sysconf(_SC_CLK_TCK)`, 100 per second on Linux).
/// With `task`, `pid` is a thread of process `task` (/proc/<task>/task/<pid>/stat).
func processCPUSeconds(_ pid: pid_t, task: pid_t? = nil) -> Double? {
    let path = task.map { "/proc/\($0)/task/\(pid)/stat" } ?? "/proc/\(pid)/stat"
    guard let text = readSmallFile(path),
          let closeParen = text.lastIndex(of: ")") else { return nil }
    // Fields after the command name (which may contain spaces) start with field 3, the state.
    let fields = text[text.index(after: closeParen)...].split(separator: " ")
    guard fields.count > 13, let utime = Double(fields[11]), let stime = Double(fields[12]) else { return nil }
    return (utime + stime) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

func readSmallFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: 4096)
    let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    guard n > 0 else { return nil }
    return String(decoding: bytes[..<n], as: UTF8.self)
}

/// The path of this executable, to start it again as `relay-serve`.
func currentExecutablePath() -> String? {
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard n > 0 else { return nil }
    return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

func wallSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
