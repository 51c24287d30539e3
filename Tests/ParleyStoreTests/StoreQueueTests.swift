import ParleyStore
import Testing

/// `StoreQueue` over a connection from each store factory.
@Suite struct StoreQueueTests {
    @Test(arguments: StoreFactory.all) func concurrentTasksShareOneStoreThroughTheQueue(_ factory: StoreFactory) async throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let queue = try StoreQueue(opening: fixture.connections)
        #expect(queue.appliedMigrations == fixture.freshMigrations)
        try await queue.perform { store throws(StoreError) in
            try store.createApplication(key: "app", name: "test", secret: "s", at: T.base)
            for user in ["alice", "bob"] { try store.recordUserSeen(applicationKey: "app", userId: user, at: T.base) }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for number in 0..<40 {
                group.addTask { () async throws -> Void in
                    _ = try await queue.perform { store throws(StoreError) -> StoredCall in
                        try store.completedCall(callID(number), start: T.at(Int64(number)))
                    }
                }
            }
            try await group.waitForAll()
        }
        let page = try await queue.perform { store throws(StoreError) in
            try store.calls(CallQuery(applicationKey: "app", user: "bob", limit: 100))
        }
        #expect(page.calls.map(\.callId) == (0..<40).map(callID))

        let error = await #expect(throws: StoreError.self) {
            try await queue.perform { store throws(StoreError) in try store.finishCall(id: callID(999), cause: .hungUp, at: T.base) }
        }
        #expect(error?.kind == .notFound)
        #expect(try queue.performAndWait { store throws(StoreError) in try store.applications().count } == 1)
    }
}
