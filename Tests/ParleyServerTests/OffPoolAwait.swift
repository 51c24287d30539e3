import Dispatch
@testable import ParleyServer
import Synchronization

/// Runs an async server API from a synchronous test and waits for it, on the REST API's own
/// executor instead of Swift's cooperative pool: the pool has one thread per core (2 here),
/// and the synchronous tests running beside it block those threads on sockets, so an async
/// test's resumption could wait tens of seconds for one, and a call timer fire meanwhile.
func awaitOffPool<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let result = Mutex<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task(executorPreference: RESTTaskExecutor()) {
        let value = await body()
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    return result.withLock { $0! }
}
