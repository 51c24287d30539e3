import Testing
import Glibc
@testable import ParleyBench

/// `/proc/<pid>/stat` lines as proc(5) lays them out, and the process trees the SIP bench
/// sums Kamailio's CPU over.
@Suite struct ProcStatTests {
    /// A line as Linux writes it (fields 1-52): pid 4242, parent 4200, utime 1234, stime 56.
    static let kamailio = "4242 (kamailio) S 4200 4242 4242 0 -1 4194560 1500 0 0 0 1234 56 0 0 20 0 1 0 3771374 "
        + "3133440 360 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"

    @Test func readsTheParentAndBothTimes() throws {
        let stat = try #require(ProcStat(line: Self.kamailio[...]))
        #expect(stat == ProcStat(pid: 4242, parentPID: 4200, userTicks: 1234, systemTicks: 56))
        #expect(stat.ticks == 1290)
    }

    /// The command name may hold spaces and parentheses: the fields are counted from the
    /// last `)`.
    @Test func aNameWithSpacesAndParenthesesDoesNotShiftTheFields() throws {
        let line = "77 (a (weird) name) R 1 77 77 0 -1 0 0 0 0 0 9 3 0 0 20 0 1 0 5 0 0"
        let stat = try #require(ProcStat(line: line[...]))
        #expect(stat.pid == 77)
        #expect(stat.parentPID == 1)
        #expect(stat.userTicks == 9)
        #expect(stat.systemTicks == 3)
    }

    @Test(arguments: ["", "4242", "4242 (kamailio", "x (kamailio) S 1 2 3", "4242 (kamailio) S 4200 4242",
                      "4242 (kamailio) S 4200 1 1 0 -1 0 0 0 0 0 many 56 0"])
    func whatIsNotAStatLineIsRefused(_ line: String) {
        #expect(ProcStat(line: line[...]) == nil)
    }

    /// Kamailio's main process, two workers, a timer a worker forked, and processes that
    /// are not Kamailio's (its parent, a sibling).
    @Test func aTreeIsTheRootAndEveryDescendant() {
        let stats = [
            ProcStat(pid: 1, parentPID: 0, userTicks: 500, systemTicks: 500),
            ProcStat(pid: 10, parentPID: 1, userTicks: 1, systemTicks: 2),
            ProcStat(pid: 11, parentPID: 10, userTicks: 10, systemTicks: 20),
            ProcStat(pid: 12, parentPID: 10, userTicks: 100, systemTicks: 200),
            ProcStat(pid: 13, parentPID: 12, userTicks: 1000, systemTicks: 2000),
            ProcStat(pid: 20, parentPID: 1, userTicks: 7, systemTicks: 7),
        ]
        #expect(Set(ProcStat.tree(root: 10, in: stats).map(\.pid)) == [10, 11, 12, 13])
        #expect(ProcStat.treeTicks(root: 10, in: stats) == 3333)
        #expect(ProcStat.treeTicks(root: 13, in: stats) == 3000)
        #expect(ProcStat.treeTicks(root: 99, in: stats) == 0)
    }

    /// A list where two entries name each other as parent ends, each counted once.
    @Test func aCycleIsVisitedOnce() {
        let stats = [ProcStat(pid: 5, parentPID: 6, userTicks: 1, systemTicks: 0), ProcStat(pid: 6, parentPID: 5, userTicks: 2, systemTicks: 0)]
        #expect(ProcStat.treeTicks(root: 5, in: stats) == 3)
    }

    /// This test process: a real line of /proc parses, and its tree holds at least itself.
    @Test func thisProcessReadsFromProc() throws {
        let stats = ProcStat.allProcesses()
        let me = try #require(stats.first { $0.pid == getpid() })
        #expect(me.parentPID == getppid())
        #expect(ProcStat.treeProcessCount(root: getpid()) >= 1)
    }
}
