import Glibc

/// The fields of one `/proc/<pid>/stat` line the benchmarks read: the parent, and the
/// process's own user and system CPU time in clock ticks (proc(5): fields 4, 14 and 15).
///
/// Kamailio forks its workers, so its CPU is the sum over the process it was started as and
/// every process below it (`treeCPUSeconds`); each worker's time is in its own line, not
/// its parent's (`cutime` counts only children that exited and were waited for).
struct ProcStat: Equatable {
    let pid: pid_t
    let parentPID: pid_t
    let userTicks: UInt64
    let systemTicks: UInt64

    init(pid: pid_t, parentPID: pid_t, userTicks: UInt64, systemTicks: UInt64) {
        self.pid = pid
        self.parentPID = parentPID
        self.userTicks = userTicks
        self.systemTicks = systemTicks
    }

    /// Parses one stat line; nil when it is not one. The command name (field 2) is in
    /// parentheses and may hold spaces and parentheses itself, so the fields after it are
    /// counted from the last `)`.
    init?(line: Substring) {
        guard let open = line.firstIndex(of: "("), let close = line.lastIndex(of: ")"), open < close,
              let pid = pid_t(line[..<open].trimmingSpaces) else { return nil }
        // Field 3 (the state) is the first after the name; utime and stime are 14 and 15.
        let fields = line[line.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count > 12, let parent = pid_t(fields[1]), let user = UInt64(fields[11]), let system = UInt64(fields[12]) else {
            return nil
        }
        self.pid = pid
        parentPID = parent
        userTicks = user
        systemTicks = system
    }

    /// User plus system time in clock ticks.
    var ticks: UInt64 { userTicks + systemTicks }

    /// `root` and every process below it among `stats` (the root first when present);
    /// processes whose chain of parents does not reach `root` are left out, and a cycle
    /// (impossible in /proc, but the input is a list) is visited once.
    static func tree(root: pid_t, in stats: [ProcStat]) -> [ProcStat] {
        var children: [pid_t: [pid_t]] = [:]
        var byPID: [pid_t: ProcStat] = [:]
        for stat in stats {
            children[stat.parentPID, default: []].append(stat.pid)
            byPID[stat.pid] = stat
        }
        var members: [ProcStat] = []
        var seen: Set<pid_t> = []
        var pending = [root]
        while let pid = pending.popLast() {
            guard seen.insert(pid).inserted else { continue }
            if let stat = byPID[pid] { members.append(stat) }
            pending += children[pid] ?? []
        }
        return members
    }

    /// The summed ticks of `root` and every process below it among `stats`.
    static func treeTicks(root: pid_t, in stats: [ProcStat]) -> UInt64 {
        tree(root: root, in: stats).reduce(0) { $0 + $1.ticks }
    }

    /// The stat line of every process now (processes that exit while they are read are
    /// skipped).
    static func allProcesses() -> [ProcStat] {
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        var stats: [ProcStat] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = pid_t(name), let text = readSmallFile("/proc/\(pid)/stat"),
                  let stat = ProcStat(line: text.split(separator: "\n").first ?? "") else { continue }
            stats.append(stat)
        }
        return stats
    }

    /// CPU seconds of `root` and every process it forked (and they forked), from /proc.
    static func treeCPUSeconds(root: pid_t) -> Double {
        Double(treeTicks(root: root, in: allProcesses())) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// How many processes `root`'s tree holds now, itself included.
    static func treeProcessCount(root: pid_t) -> Int { tree(root: root, in: allProcesses()).count }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}
