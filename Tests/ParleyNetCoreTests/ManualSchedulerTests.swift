import Foundation
import Testing
import ParleyNetCore
import ParleyTestSupport
import Synchronization

/// The `Scheduler` contract as the manual (virtual-time) implementation keeps it: order of
/// work, timers at their deadlines with the clock reading them, cancel, and work handed
/// over from other threads.
@Suite struct ManualSchedulerTests {
    final class Log: Sendable {
        let entries = Mutex<[String]>([])
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    @Test func workRunsOnlyWhenTheTestRunsItInOrder() {
        let scheduler = ManualScheduler()
        let log = Log()
        scheduler.execute { log.add("a") }
        scheduler.execute {
            log.add("b")
            scheduler.execute { log.add("d") }
        }
        scheduler.execute { log.add("c") }
        #expect(log.all.isEmpty)
        #expect(scheduler.run() == 4)
        #expect(log.all == ["a", "b", "c", "d"])
    }

    @Test func timersRunAtTheirDeadlinesInVirtualTime() {
        let start = ContinuousClock.now
        let scheduler = ManualScheduler(start: start)
        let log = Log()
        scheduler.schedule(after: .seconds(30)) { log.add("30 at \(start.duration(to: scheduler.now))") }
        scheduler.schedule(after: .seconds(10)) {
            log.add("10 at \(start.duration(to: scheduler.now))")
            scheduler.schedule(after: .seconds(5)) { log.add("15 at \(start.duration(to: scheduler.now))") }
        }
        let late = scheduler.schedule(after: .seconds(10)) { log.add("10b") }
        scheduler.advance(by: .seconds(9))
        #expect(log.all.isEmpty)
        #expect(scheduler.nextDeadline == start.advanced(by: .seconds(10)))
        scheduler.advance(by: .seconds(11))
        #expect(log.all == ["10 at 10.0 seconds", "10b", "15 at 15.0 seconds"])
        #expect(scheduler.now == start.advanced(by: .seconds(20)))
        #expect(scheduler.cancel(late) == false)
        scheduler.advance(by: .seconds(10))
        #expect(log.all.last == "30 at 30.0 seconds")
        #expect(scheduler.pendingTimerCount == 0)
    }

    @Test func cancelledTimersNeverRunAndEqualDeadlinesKeepOrder() {
        let scheduler = ManualScheduler()
        let log = Log()
        let deadline = scheduler.now.advanced(by: .milliseconds(20))
        scheduler.schedule(at: deadline) { log.add("first") }
        let second = scheduler.schedule(at: deadline) { log.add("second") }
        scheduler.schedule(at: deadline) { log.add("third") }
        #expect(scheduler.cancel(second))
        #expect(!scheduler.cancel(second))
        scheduler.advance(by: .milliseconds(20))
        #expect(log.all == ["first", "third"])
    }

    @Test func inSchedulerHoldsOnlyWhileItsWorkRuns() {
        let scheduler = ManualScheduler()
        let inside = Mutex(false)
        #expect(!scheduler.inScheduler)
        scheduler.execute { inside.withLock { $0 = scheduler.inScheduler } }
        scheduler.run()
        #expect(inside.withLock { $0 })
        #expect(!scheduler.inScheduler)
    }

    @Test func runUntilTakesWorkHandedOverByAnotherThread() {
        let scheduler = ManualScheduler()
        let log = Log()
        // A thread of its own, not a global queue: under the parallel run the global
        // queues' threads are busy with blocking tests, which delayed this by seconds.
        let thread = Thread { scheduler.execute { log.add("from a queue") } }
        thread.start()
        #expect(scheduler.run(until: { !log.all.isEmpty }, timeout: .seconds(10)))
        #expect(log.all == ["from a queue"])
        // A condition that never holds gives up after its (real) timeout.
        #expect(!scheduler.run(until: { false }, timeout: .milliseconds(20)))
    }

    @Test func aStoppedSchedulerRefusesWork() {
        let scheduler = ManualScheduler()
        scheduler.schedule(after: .seconds(1)) { Issue.record("dropped work ran") }
        scheduler.stop()
        #expect(!scheduler.execute { Issue.record("refused work ran") })
        scheduler.advance(by: .seconds(2))
        #expect(scheduler.pendingTimerCount == 0)
    }
}
