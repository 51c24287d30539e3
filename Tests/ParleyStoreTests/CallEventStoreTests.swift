import ParleySQLite
import ParleyStore
import Testing

/// A call's timeline (migration 3), on every store.
@Suite struct CallEventStoreTests {
    @Test(arguments: StoreFactory.all) func eventsComeBackInOrderWithTheirDetail(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        // Before the call record exists: push answers may be written first.
        #expect(try store.recordCallEvent(callId: "c1", applicationKey: "app",
                                          CallEvent(time: T.base + 5, kind: "push.sent", detail: ["device": "b1", "attempt": "1"])))
        try store.createCall(id: "c1", applicationKey: "app", caller: "alice", callee: "bob", startedTime: T.base)
        try store.recordCallEvent(callId: "c1", applicationKey: "app", CallEvent(time: T.base + 3, kind: "push.answer", detail: ["status": "503"]))
        try store.recordCallEvent(callId: "c2", applicationKey: "app", CallEvent(time: T.base, kind: "push.sent"))
        let events = try store.callEvents(callId: "c1")
        // Recorded order, not time order: the clock of the writer decides nothing here.
        #expect(events.map(\.kind) == ["push.sent", "push.answer"])
        #expect(events[0] == CallEvent(time: T.base + 5, kind: "push.sent", detail: ["device": "b1", "attempt": "1"]))
        #expect(events[1].detail == ["status": "503"])
        #expect(try store.callEvents(callId: "c1", applicationKey: "other").isEmpty)
        #expect(try store.callEvents(callId: "missing").isEmpty)
    }

    @Test(arguments: StoreFactory.all) func badInputIsRefused(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        #expect(throws: StoreError.self) { try store.recordCallEvent(callId: "c1", applicationKey: "nope", CallEvent(time: 1, kind: "push.sent")) }
        #expect(throws: StoreError.self) { try store.recordCallEvent(callId: "", applicationKey: "app", CallEvent(time: 1, kind: "push.sent")) }
        #expect(throws: StoreError.self) { try store.recordCallEvent(callId: "c1", applicationKey: "app", CallEvent(time: 1, kind: "")) }
        #expect(try store.callEvents(callId: "c1").isEmpty)
    }

    @Test(arguments: StoreFactory.all) func aCallKeepsAtMostTheMaximumNumberOfEvents(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        for index in 0..<CallEvent.maximumPerCall {
            #expect(try store.recordCallEvent(callId: "c1", applicationKey: "app", CallEvent(time: Int64(index), kind: "push.retry")))
        }
        #expect(try store.recordCallEvent(callId: "c1", applicationKey: "app", CallEvent(time: 0, kind: "push.answer")) == false)
        #expect(try store.callEvents(callId: "c1").count == CallEvent.maximumPerCall)
    }

    /// SQLite-only: the bad value is written with raw SQL.
    @Test func aStoredDetailThatIsNotAStringObjectReadsAsEmpty() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore.withApplication(path: directory.storePath)
        try store.recordCallEvent(callId: "c1", applicationKey: "app", CallEvent(time: 1, kind: "push.sent", detail: ["a": "b"]))
        let raw = try SQLiteDatabase(path: directory.storePath)
        try raw.execute("UPDATE call_events SET detail = '[1'")
        #expect(try store.callEvents(callId: "c1") == [CallEvent(time: 1, kind: "push.sent")])
    }
}
