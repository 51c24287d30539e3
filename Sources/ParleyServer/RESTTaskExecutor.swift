import Dispatch

/// Runs the REST API's tasks on a dispatch queue of their own instead of Swift's shared
/// cooperative pool, whose width is the core count (2 here): code elsewhere in the process
/// that blocks those threads (a test harness, an embedding app) would otherwise hold every
/// REST answer back until it let go.
final class RESTTaskExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: the queue is thread-safe and never replaced.
    private let queue = DispatchQueue(label: "parley.rest")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
