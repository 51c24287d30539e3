import ParleyCallModel
import ParleyStore

#if canImport(Glibc)
import Glibc
#endif

/// The directory holding the benchmark databases, removed when the process exits.
nonisolated(unsafe) private var storeBenchDirectory: String?

/// A fresh store file in a temporary directory (removed at exit), with one application
/// and two users, as `parleyd` would have.
private func benchStore(durability: SQLiteStore.Durability, name: String) -> SQLiteStore {
    if storeBenchDirectory == nil {
        guard let made = try? makeBenchDirectory("parley-bench-store") else { fatalError("mkdtemp failed: errno \(errno)") }
        storeBenchDirectory = made
        atexit {
            guard let directory = storeBenchDirectory, let dir = opendir(directory) else { return }
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name != "." && name != ".." { unlink(directory + "/" + name) }
            }
            closedir(dir)
            rmdir(directory)
        }
    }
    do {
        let store = try SQLiteStore(path: storeBenchDirectory! + "/" + name, durability: durability)
        try store.createApplication(key: "bench", name: "bench", secret: "YmVuY2g=", at: 1_764_421_200_000)
        for user in ["alice", "bob"] { try store.recordUserSeen(applicationKey: "bench", userId: user, at: 1_764_421_200_000) }
        return store
    } catch {
        fatalError("bench store: \(error)")
    }
}

/// One call as `parleyd` records it: a commit per step (create, progress, ring, answer,
/// establish) and a final commit with both legs' statistics.
private func recordCall(_ store: SQLiteStore, _ number: Int, lifecycle: Bool) throws {
    let id = "00000000-0000-4000-8000-" + String(number, radix: 16)
    let start = 1_764_421_200_000 + Int64(number)
    try store.createCall(id: id, applicationKey: "bench", caller: "alice", callee: "bob", startedTime: start)
    if lifecycle {
        try store.updateCallState(id: id, to: .progressing, at: start + 40)
        try store.updateCallState(id: id, to: .ringing, at: start + 220)
        try store.updateCallState(id: id, to: .answered, at: start + 4780)
        try store.updateCallState(id: id, to: .established, at: start + 4910)
    }
    let statistics = CallLegStatistics(
        packetsSent: 3000, octetsSent: 240_000, packetsReceived: 2970, octetsReceived: 237_600, inboundFractionLost: 0.01,
        inboundCumulativeLost: 30, inboundJitterMilliseconds: 2.5, outboundFractionLost: 0, outboundCumulativeLost: 1,
        outboundJitterMilliseconds: 1.25, roundTripTimeMilliseconds: 12.5)
    let end = start + 64_780
    try store.finishCall(
        id: id, cause: .hungUp, at: end,
        legs: [
            CallLeg(role: .caller, userId: "alice", deviceId: "d1", updatedTime: end, statistics: statistics),
            CallLeg(role: .callee, userId: "bob", deviceId: "d2", updatedTime: end, statistics: statistics),
        ])
}

/// The stores and counters of the benchmark rows, made on first use so that runs of
/// other formats do not create files.
private final class StoreBenchState {
    lazy var short = benchStore(durability: .processCrash, name: "short.sqlite")
    lazy var full = benchStore(durability: .processCrash, name: "full.sqlite")
    lazy var reads: SQLiteStore = {
        let store = benchStore(durability: .processCrash, name: "reads.sqlite")
        for number in 0..<StoreBenchState.storedCalls {
            do { try recordCall(store, number, lifecycle: true) } catch { fatalError("bench store: \(error)") }
        }
        return store
    }()
    var shortCount = 0
    var fullCount = 0
    var readCount = 0
    static let storedCalls = 2000
}

/// Call records on a temporary SQLite file (WAL, `processCrash` durability: no `fsync`
/// per commit, so the thread's CPU time is the cost). Rows count calls per second.
func storeBenchmarks() -> [Benchmark] {
    let state = StoreBenchState()
    return [
        Benchmark(format: "store", operation: "call create + finish (2 commits)", messageBytes: 0) {
            state.shortCount += 1
            do { try recordCall(state.short, state.shortCount, lifecycle: false) } catch { fatalError("bench store: \(error)") }
            benchmarkSink &+= state.shortCount
        },
        Benchmark(format: "store", operation: "call lifecycle (6 commits, 2 legs)", messageBytes: 0) {
            state.fullCount += 1
            do { try recordCall(state.full, state.fullCount, lifecycle: true) } catch { fatalError("bench store: \(error)") }
            benchmarkSink &+= state.fullCount
        },
        Benchmark(format: "store", operation: "GET /v1/calls/{id} (call + 2 legs)", messageBytes: 0) {
            state.readCount = (state.readCount + 7) % StoreBenchState.storedCalls
            let id = "00000000-0000-4000-8000-" + String(state.readCount, radix: 16)
            do { benchmarkSink &+= try state.reads.call(id: id)?.legs.count ?? 0 } catch { fatalError("bench store: \(error)") }
        },
        Benchmark(format: "store", operation: "GET /v1/calls?user= (page of 50)", messageBytes: 0) {
            state.readCount = (state.readCount + 7) % StoreBenchState.storedCalls
            let query = CallQuery(applicationKey: "bench", user: "bob", since: 1_764_421_200_000 + Int64(state.readCount), limit: 50)
            do { benchmarkSink &+= try state.reads.calls(query).calls.count } catch { fatalError("bench store: \(error)") }
        },
    ]
}

/// Wall-clock rate of whole call lifecycles with each durability, since `powerLoss`
/// waits for `fsync` (time the harness's CPU clock does not see). Printed separately.
func storeDurabilityReport(seconds: Double) -> String {
    func wallSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
    var lines = ["store wall-clock, call lifecycle (6 commits, 2 legs) on a /tmp file, \(seconds) s each:"]
    for (durability, label) in [(SQLiteStore.Durability.processCrash, "processCrash (NORMAL)"), (.powerLoss, "powerLoss (FULL at finish)")] {
        let store = benchStore(durability: durability, name: "wall-\(label.prefix(5)).sqlite")
        var calls = 0
        let start = wallSeconds()
        var elapsed = 0.0
        while elapsed < seconds {
            calls += 1
            do { try recordCall(store, calls, lifecycle: true) } catch { fatalError("bench store: \(error)") }
            elapsed = wallSeconds() - start
        }
        let rate = Double(calls) / elapsed
        lines.append("  \(label): \(Int(rate)) calls/s, \(Int(1e6 / rate)) us per call")
    }
    return lines.joined(separator: "\n")
}
