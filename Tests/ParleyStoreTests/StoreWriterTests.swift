import ParleyStore
import Synchronization
import Testing

/// `StoreWriter`: ordered group commits on a connection of its own, retried while another
/// connection holds the write lock, refusals left out without losing the rest; on every store.
@Suite struct StoreWriterTests {
    final class Reports: Sendable {
        let committed = Mutex<[UInt64]>([])
        let failures = Mutex<[StoreWriter.Failure]>([])
    }

    func writer(_ fixture: TestStore, _ reports: Reports) throws -> StoreWriter {
        try StoreWriter(opening: fixture.connections, retryDelay: .milliseconds(10), maxRetryDelay: .milliseconds(40),
                        onCommitted: { ticket in reports.committed.withLock { $0.append(ticket) } },
                        onFailure: { failure in reports.failures.withLock { $0.append(failure) } })
    }

    @Test(arguments: StoreFactory.all) func writesCommitInTicketOrderAndManyShareACommit(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        try fixture.open().createApplication(key: "app", name: "a", secret: "s", at: T.base)
        let reports = Reports()
        let writer = try writer(fixture, reports)
        var tickets: [UInt64] = []
        for number in 0..<300 {
            let id = callID(number)
            tickets.append(writer.enqueue(.init(name: "createCall", subject: id, durable: false) { store throws(StoreError) in
                try store.createCall(id: id, applicationKey: "app", caller: "alice", callee: "bob", startedTime: T.at(Int64(number)))
            }))
        }
        #expect(tickets == Array(1...300))
        #expect(writer.flush(timeout: .seconds(10)))
        #expect(writer.doneTicket == 300)
        let statistics = writer.statistics
        #expect(statistics.committed == 300)
        #expect(statistics.commits < 300, "writes waiting together share a transaction")
        #expect(reports.committed.withLock { $0 } == reports.committed.withLock { $0 }.sorted())
        let store = try fixture.open()
        #expect(try store.calls(CallQuery(applicationKey: "app", limit: 1000)).calls.map(\.callId) == (0..<300).map(callID))
    }

    @Test(arguments: StoreFactory.all) func aWriteLockHeldByAnotherConnectionIsWaitedOutNotLost(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        try fixture.open().createApplication(key: "app", name: "a", secret: "s", at: T.base)
        let reports = Reports()
        let writer = try writer(fixture, reports)
        let releaseLock = try fixture.holdWriteLock()
        let id = callID(1)
        let ticket = writer.enqueue(.init(name: "createCall", subject: id, durable: false) { store throws(StoreError) in
            try store.createCall(id: id, applicationKey: "app", caller: "alice", callee: "bob", startedTime: T.base)
        })
        #expect(!writer.flush(timeout: .milliseconds(300)), "nothing commits while the lock is held")
        #expect(writer.doneTicket < ticket)
        #expect(writer.statistics.retries > 0)
        #expect(reports.failures.withLock { $0 }.allSatisfy { $0.willRetry && $0.error.isTransient && fixture.isLockConflict($0.error) })
        releaseLock()
        #expect(writer.flush(timeout: .seconds(5)))
        #expect(writer.doneTicket == ticket)
        #expect(try fixture.open().call(id: id) != nil)
    }

    @Test(arguments: StoreFactory.all) func aRefusedWriteIsLeftOutAndTheOthersCommit(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        try fixture.open().createApplication(key: "app", name: "a", secret: "s", at: T.base)
        let reports = Reports()
        let writer = try writer(fixture, reports)
        let committedNames = Mutex<[String]>([])
        // Held back behind a lock so that all three share one transaction.
        let releaseLock = try fixture.holdWriteLock()
        for (number, applicationKey) in [(1, "app"), (2, "no-such-app"), (3, "app")] {
            let id = callID(number)
            writer.enqueue(.init(name: "createCall", subject: id, durable: false,
                                 committed: { committedNames.withLock { $0.append(id) } }) { store throws(StoreError) in
                try store.createCall(id: id, applicationKey: applicationKey, caller: "alice", callee: "bob", startedTime: T.base)
            })
        }
        releaseLock()
        #expect(writer.flush(timeout: .seconds(5)))
        #expect(writer.statistics.dropped == 1)
        #expect(writer.statistics.committed == 2)
        let refused = reports.failures.withLock { $0 }.filter { !$0.willRetry }
        #expect(refused.map(\.subject) == [callID(2)])
        #expect(refused.first?.error.kind == .notFound)
        #expect(committedNames.withLock { $0 } == [callID(1), callID(3)])
        let store = try fixture.open()
        #expect(try store.call(id: callID(1)) != nil)
        #expect(try store.call(id: callID(2)) == nil)
        #expect(try store.call(id: callID(3)) != nil)
    }
}
