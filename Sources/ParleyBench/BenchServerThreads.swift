import Dispatch
import Foundation
import Synchronization

// The server benchmarks drive blocking WebSocket clients, one thread per caller/callee
// pair (the cooperative pool has only as many threads as cores, and a blocked pool thread
// would stall every MediaLeg call). MediaLeg's async API is reached from these threads
// through `blockingAwait`; the legs run on their own EventLoops, not on the pool.

/// Runs `body(index)` on `count` new threads and waits until every one has returned.
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroupOfThreads()
    for index in 0..<count { group.start { body(index) } }
    group.wait()
}

/// Threads started one by one and waited for together.
final class DispatchGroupOfThreads: Sendable {
    private let group = DispatchGroup()

    func start(_ body: @escaping @Sendable () -> Void) {
        group.enter()
        let thread = Thread { [group] in
            body()
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    func wait() { group.wait() }
}

/// Where `blockingAwait` leaves the task's outcome for the waiting thread.
private final class OutcomeBox<T: Sendable>: Sendable {
    let outcome = Mutex<Result<T, any Error>?>(nil)
}

/// Runs `body` as a task and blocks this (non-pool) thread until it finishes.
func blockingAwait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let done = DispatchSemaphore(value: 0)
    let box = OutcomeBox<T>()
    Task {
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        box.outcome.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    return try box.outcome.withLock { $0 }!.get()
}

/// A value handed from one thread to another after the first is done with it (the
/// benchmarks pass devices from the set-up threads to the main thread this way).
final class HandOver<T>: @unchecked Sendable {
    // Unchecked: only one thread uses `value` at a time; the hand-over goes through
    // DispatchGroup.wait / a Mutex, which order the accesses.
    let value: T
    init(_ value: T) { self.value = value }
}

/// The p-quantile (0...1) of `samples`, nearest rank; nan when empty.
func quantile(_ samples: [Double], _ p: Double) -> Double {
    guard !samples.isEmpty else { return .nan }
    let sorted = samples.sorted()
    let rank = Int((p * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}

func serverEnvironmentInt(_ name: String, _ fallback: Int, _ range: ClosedRange<Int>) -> Int {
    guard let text = ProcessInfo.processInfo.environment[name], let value = Int(text), range.contains(value) else { return fallback }
    return value
}

/// Formats `value` with `digits` decimals.
func fixed(_ value: Double, _ digits: Int) -> String {
    guard value.isFinite else { return "-" }
    return String(format: "%.\(digits)f", value)
}
