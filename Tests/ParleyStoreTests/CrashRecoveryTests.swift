import Foundation
import ParleyCallModel
import ParleySQLite
import ParleyStore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// "A crash of parleyd loses no finished call's record; calls in progress at a crash are
/// closed as error on restart."
@Suite struct CrashRecoveryTests {
    @Test(arguments: StoreFactory.all) func aFinishedCallIsVisibleToAnIndependentConnectionAtOnce(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let writer = try fixture.withApplication()
        let reader = try fixture.open()
        for number in 1...5 {
            let finished = try writer.completedCall(callID(number), start: T.at(Int64(number) * 1000))
            // No close, no checkpoint: the other connection reads it at once (SQLite: from the WAL).
            #expect(try reader.call(id: callID(number)) == finished)
        }
        try writer.createCall(id: callID(6), applicationKey: "app", caller: "bob", callee: "alice", startedTime: T.at(9000))
        #expect(try reader.call(id: callID(6))?.state == .initiating)
    }

    @Test(arguments: StoreFactory.all) func restartClosesCallsInProgressAsErrorAndLeavesEndedOnes(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        var crashed: (any CallStore)? = try fixture.withApplication()
        let done = try crashed!.completedCall(callID(1), start: T.at(0))
        try crashed!.createCall(id: callID(2), applicationKey: "app", caller: "alice", callee: "bob", startedTime: T.at(100))
        try crashed!.createCall(id: callID(3), applicationKey: "app", caller: "bob", callee: "carol", startedTime: T.at(200))
        try crashed!.updateCallState(id: callID(3), to: .answered, at: T.at(300))
        try crashed!.updateCallState(id: callID(3), to: .established, at: T.at(400))
        let leg = CallLeg(role: .caller, userId: "bob", updatedTime: T.at(5000), statistics: .sample)
        try crashed!.recordLeg(callId: callID(3), leg)

        // The restarted process opens its own connection while the old one still exists.
        let restarted = try fixture.open()
        #expect(restarted.appliedMigrations.isEmpty)
        let closed = try restarted.closeCallsInProgress(at: T.at(60_000))
        #expect(closed.map(\.callId) == [callID(2), callID(3)])
        for record in closed {
            #expect(record.state == .ended)
            #expect(record.endCause == .error)
            #expect(record.error == CallError(code: "server_restarted", message: "server restarted"))
            #expect(record.details.endedTime == T.at(60_000))
        }
        #expect(closed[0].durationMs == 0)
        #expect(closed[1].durationMs == 59_700)
        #expect(closed[1].legs == [leg])
        #expect(try restarted.call(id: callID(1)) == done)
        #expect(try restarted.closeCallsInProgress(at: T.at(70_000)).isEmpty)
        crashed = nil
    }

    @Test(arguments: StoreFactory.all) func recoveryCanUseAnotherCauseButChecksIt(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        try store.createCall(id: callID(1), applicationKey: "app", caller: "alice", callee: "bob", startedTime: T.base)
        let bad = #expect(throws: StoreError.self) { try store.closeCallsInProgress(cause: .inactive, at: T.base) }
        #expect(bad?.kind == .invalidArgument)
        let closed = try store.closeCallsInProgress(cause: .inactive, error: nil, at: T.at(5))
        #expect(closed.first?.endCause == .inactive)
        #expect(closed.first?.error == nil)
    }

    /// SQLite-only (the child holds a raw SQLite transaction on the file).
    /// The real thing: a child process writes through `SQLiteStore`, holds an open write
    /// transaction, and is killed with SIGKILL. Every call it finished is there, the
    /// uncommitted write is not, the lock it held is gone, and recovery closes its open call.
    @Test func aKilledWriterProcessLosesNoFinishedCall() throws {
        // Inside the child (should its filter ever match more), never spawn again.
        guard ProcessInfo.processInfo.environment[Self.childVariable] == nil else { return }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let child = Process()
        child.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        child.arguments = ["--testing-library", "swift-testing", "--filter", "CrashRecoveryTests/crashChildWriter"]
        child.environment = ProcessInfo.processInfo.environment.merging([Self.childVariable: directory.storePath]) { $1 }
        let output = Pipe()
        child.standardOutput = output
        child.standardError = FileHandle.nullDevice
        try child.run()
        defer { if child.isRunning { kill(child.processIdentifier, SIGKILL) } }

        // Wait (bounded) for the child to say it is inside its uncommitted transaction.
        var seen = ""
        let reader = output.fileHandleForReading
        let deadline = Date().addingTimeInterval(60)
        while !seen.contains(Self.readyLine), Date() < deadline, child.isRunning {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
        }
        try #require(seen.contains(Self.readyLine), "child output: \(seen)")
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        #expect(child.terminationReason == .uncaughtSignal)

        let restarted = try SQLiteStore(path: directory.storePath, busyTimeoutMilliseconds: 2000)
        for number in 1...Self.finishedCalls {
            let record = try #require(try restarted.call(id: callID(number)))
            #expect(record.state == .ended)
            #expect(record.endCause == .hungUp)
            #expect(record.legs.count == 2)
        }
        #expect(try restarted.call(id: callID(900)) == nil)  // never committed
        let closed = try restarted.closeCallsInProgress(at: T.at(99_000))
        #expect(closed.map(\.callId) == [callID(800)])
        #expect(try restarted.call(id: callID(800))?.endCause == .error)
    }

    static let childVariable = "PARLEY_STORE_CRASH_CHILD_PATH"
    static let readyLine = "PARLEY-CRASH-CHILD-READY"
    static let finishedCalls = 20

    /// The child half of `aKilledWriterProcessLosesNoFinishedCall`; does nothing unless
    /// started by it.
    @Test func crashChildWriter() throws {
        guard let path = ProcessInfo.processInfo.environment[Self.childVariable] else { return }
        let store = try SQLiteStore.withApplication(path: path)
        for number in 1...Self.finishedCalls { try store.completedCall(callID(number), start: T.at(Int64(number) * 1000)) }
        try store.createCall(id: callID(800), applicationKey: "app", caller: "carol", callee: "bob", startedTime: T.at(50_000))
        try store.updateCallState(id: callID(800), to: .ringing, at: T.at(50_100))

        // Mid-write when the kill comes: a transaction with an insert, never committed.
        let raw = try SQLiteDatabase(path: path)
        try raw.execute("BEGIN IMMEDIATE")
        try raw.execute(
            "INSERT INTO calls (id, application_key, caller, callee, direction, state, started_at) VALUES (?1, 'app', 'a', 'b', 'appToApp', 'initiating', 1)",
            [.text(callID(900))])
        FileHandle.standardOutput.write(Data((Self.readyLine + "\n").utf8))
        // Bounded: the parent kills us long before this ends.
        for _ in 0..<600 { usleep(100_000) }
    }
}

/// SQLite-only: `SQLiteStore.Durability` is SQLite's (WAL with synchronous NORMAL or FULL).
@Suite struct DurabilityTests {
    @Test func aPowerLossStoreRecordsTheSameAndIsReadableElsewhere() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore(path: directory.storePath, durability: .powerLoss)
        #expect(store.durability == .powerLoss)
        try store.createApplication(key: "app", name: "test", secret: "s", at: T.base)
        try store.recordUserSeen(applicationKey: "app", userId: "alice", at: T.base)
        let finished = try store.completedCall(callID(1), start: T.base)
        // After the FULL commit the connection is back to NORMAL and keeps working.
        try store.createCall(id: callID(2), applicationKey: "app", caller: "bob", callee: "alice", startedTime: T.at(5))
        try store.rotateSecret(key: "app", newSecret: "t", at: T.at(6), gracePeriodMilliseconds: 10)
        let other = try SQLiteStore(path: directory.storePath)
        #expect(other.durability == .processCrash)
        #expect(try other.call(id: callID(1)) == finished)
        #expect(try other.closeCallsInProgress(at: T.at(9)).map(\.callId) == [callID(2)])
        #expect(try other.application(key: "app")?.validSecrets(at: T.at(15)) == ["t", "s"])
    }
}
