#if canImport(Glibc)
import Glibc
#endif

/// One throughput measurement: `body` processes one message per call.
struct Benchmark {
    let format: String
    let operation: String
    let messageBytes: Int
    let body: () -> Void
}

/// Keeps results alive so the optimizer cannot drop the work being measured.
nonisolated(unsafe) var benchmarkSink: Int = 0

func threadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

struct BenchmarkResult {
    let benchmark: Benchmark
    let messagesPerSecond: Double
    let nanosecondsPerMessage: Double
}

/// Runs `benchmark` for about `seconds` of this thread's CPU time, after a warm-up,
/// and reports messages per CPU-second (that is, per core).
func run(_ benchmark: Benchmark, seconds: Double) -> BenchmarkResult {
    for _ in 0..<1000 { benchmark.body() }
    var iterations = 0
    var batch = 100
    let start = threadCPUSeconds()
    var elapsed = 0.0
    while elapsed < seconds {
        for _ in 0..<batch { benchmark.body() }
        iterations += batch
        elapsed = threadCPUSeconds() - start
        if elapsed < seconds / 10 { batch *= 2 }
    }
    let rate = Double(iterations) / elapsed
    return BenchmarkResult(benchmark: benchmark, messagesPerSecond: rate, nanosecondsPerMessage: 1e9 / rate)
}
