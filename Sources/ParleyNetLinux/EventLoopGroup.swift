public import ParleyNetCore
import Glibc
import Synchronization

/// A fixed set of ``EventLoop``s, at most one per online core, handed out round-robin.
/// A server gives each call leg's socket to ``next()`` and keeps it there for its lifetime.
public final class EventLoopGroup: Sendable {
    /// The loops, in creation order.
    public let loops: [EventLoop]
    private let cursor = Atomic<Int>(0)

    /// Starts `loopCount` loops, clamped to 1...(online cores).
    public init(loopCount: Int, namePrefix: String = "parley-loop") throws(NetError) {
        let cores = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let count = min(max(1, loopCount), cores)
        var loops: [EventLoop] = []
        for index in 0..<count {
            do {
                loops.append(try EventLoop(name: "\(namePrefix)-\(index)"))
            } catch {
                for loop in loops { loop.shutdown() }
                throw error
            }
        }
        self.loops = loops
    }

    /// One loop per online core.
    public convenience init() throws(NetError) {
        try self.init(loopCount: Int.max)
    }

    /// The next loop, round-robin.
    public func next() -> EventLoop {
        let index = cursor.wrappingAdd(1, ordering: .relaxed).oldValue
        return loops[(index % loops.count + loops.count) % loops.count]
    }

    /// Shuts every loop down (see ``EventLoop/shutdown()``).
    public func shutdown() {
        for loop in loops { loop.shutdown() }
    }
}
