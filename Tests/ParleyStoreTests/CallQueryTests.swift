import ParleyStore
import ParleyTestSupport
import Testing

/// `GET /v1/calls` queries and paging, on every store.
@Suite struct CallQueryTests {
    /// alice->bob at 0, bob->carol at 1000, carol->alice at 2000, alice->carol at 3000;
    /// and a call of another application.
    private func fourCalls(_ fixture: TestStore) throws -> any CallStore {
        let store = try fixture.withApplication()
        try store.completedCall(callID(1), caller: "alice", callee: "bob", start: T.at(0))
        try store.completedCall(callID(2), caller: "bob", callee: "carol", start: T.at(1000))
        try store.completedCall(callID(3), caller: "carol", callee: "alice", start: T.at(2000))
        try store.createCall(id: callID(4), applicationKey: "app", caller: "alice", callee: "carol", startedTime: T.at(3000))
        try store.createApplication(key: "other", name: "other", secret: "s", at: T.base)
        try store.createCall(id: callID(5), applicationKey: "other", caller: "alice", callee: "bob", startedTime: T.at(1500))
        return store
    }

    @Test(arguments: StoreFactory.all) func byUserMatchesCallerOrCalleeOldestFirst(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fourCalls(fixture)
        let alice = try store.calls(CallQuery(applicationKey: "app", user: "alice"))
        #expect(alice.calls.map(\.callId) == [callID(1), callID(3), callID(4)])
        #expect(alice.nextCursor == nil)
        let bob = try store.calls(CallQuery(applicationKey: "app", user: "bob"))
        #expect(bob.calls.map(\.callId) == [callID(1), callID(2)])
        #expect(try store.calls(CallQuery(applicationKey: "app", user: "nobody")).calls.isEmpty)
        // Legs come with listed calls.
        #expect(bob.calls[0].legs.count == 2)
    }

    @Test(arguments: StoreFactory.all) func sinceIsInclusiveAndApplicationsAreSeparate(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fourCalls(fixture)
        let since = try store.calls(CallQuery(applicationKey: "app", since: T.at(1000)))
        #expect(since.calls.map(\.callId) == [callID(2), callID(3), callID(4)])
        let aliceSince = try store.calls(CallQuery(applicationKey: "app", user: "alice", since: T.at(2001)))
        #expect(aliceSince.calls.map(\.callId) == [callID(4)])
        let other = try store.calls(CallQuery(applicationKey: "other"))
        #expect(other.calls.map(\.callId) == [callID(5)])
        #expect(try store.calls(CallQuery(applicationKey: "none")).calls.isEmpty)
    }

    @Test(arguments: StoreFactory.all) func pagesWalkEveryCallOnceInStableOrder(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        var generator = SeededGenerator(seed: 42)
        var expected: [(Int64, Int, String)] = []
        // Many calls sharing start milliseconds, inserted out of time order.
        for number in 0..<53 {
            let start = T.at(Int64(generator.below(10)) * 1000)
            let user = number % 3 == 0 ? "carol" : "alice"
            try store.createCall(id: callID(number), applicationKey: "app", caller: user, callee: "bob", startedTime: start)
            expected.append((start, number, callID(number)))
        }
        expected.sort { ($0.0, $0.1) < ($1.0, $1.1) }

        for limit in [1, 7, 53, 100] {
            var seen: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let page = try store.calls(CallQuery(applicationKey: "app", user: "bob", limit: limit, cursor: cursor))
                #expect(page.calls.count <= limit)
                seen += page.calls.map(\.callId)
                cursor = page.nextCursor
                pages += 1
            } while cursor != nil && pages < 100
            #expect(seen == expected.map(\.2), "limit \(limit)")
        }

        // A call created after the first page (so started later) comes at the end; the
        // pages before it do not shift.
        let first = try store.calls(CallQuery(applicationKey: "app", limit: 10))
        try store.createCall(id: callID(999), applicationKey: "app", caller: "alice", callee: "bob", startedTime: T.at(20_000))
        let rest = try store.calls(CallQuery(applicationKey: "app", limit: 1000, cursor: first.nextCursor))
        #expect(first.calls.map(\.callId) == expected.prefix(10).map(\.2))
        #expect(rest.calls.map(\.callId) == expected.dropFirst(10).map(\.2) + [callID(999)])
    }

    @Test(arguments: StoreFactory.all) func badLimitsAndCursorsAreInvalidArguments(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fourCalls(fixture)
        for limit in [0, -1, 1001] {
            let error = #expect(throws: StoreError.self) { try store.calls(CallQuery(applicationKey: "app", limit: limit)) }
            #expect(error?.kind == .invalidArgument)
        }
        for cursor in ["", "1", "a.b", "1.2.3", "-1.2", "1.", ".1", "99999999999999999999.1", "1 .2", "１.2"] {
            let error = #expect(throws: StoreError.self) { try store.calls(CallQuery(applicationKey: "app", cursor: cursor)) }
            #expect(error?.kind == .invalidArgument, "cursor \(cursor)")
        }
        // A well-formed cursor from nowhere just positions the search.
        let page = try store.calls(CallQuery(applicationKey: "app", cursor: "\(T.at(1500)).0"))
        #expect(page.calls.map(\.callId) == [callID(3), callID(4)])
    }
}
