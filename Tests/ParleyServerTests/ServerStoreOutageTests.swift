import Foundation
import ParleyCallCore
import ParleyServer
import ParleySignaling
import ParleyStore
import Testing

/// The store locked by another process (docs/operations.md, "When the store is slow or
/// locked"): signaling of other calls goes on, a call ended during the lock is stored as
/// ended once the lock is gone, and the `call.ended` waits for that commit.
@Suite struct ServerStoreOutageTests {
    @Test func aStoreLockedByAnotherProcessFreezesNoOtherDeviceAndLosesNoRecord() throws {
        let harness = try ServerHarness()
        let alice = try harness.device("alice")
        let bob = try harness.device("bob")
        let carol = try harness.device("carol")
        let callID = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
        try alice.expect(.callMedia)
        try alice.expect(.callProgress)
        try bob.expect(.callIncoming)
        try bob.request(SignalingMessage.callAck, callID: callID)
        try alice.expect(.callRinging)
        #expect(try harness.waitForStoredCall(callID) { $0.state == .ringing }?.state == .ringing)

        // Longer than SQLite's busy timeout (5 s on the server's connections), so a write
        // that waits once and gives up would be lost.
        let lock = try StoreLockHolder(path: harness.directory + "/" + SQLiteStore.defaultFileName, seconds: 6.5)
        let locked = ContinuousClock.now

        let hangupID = alice.requestID()
        try alice.send(.callHangup(.init(requestID: hangupID, callID: callID)))
        // Another device is served at once while the final record waits for the lock.
        let pingStart = ContinuousClock.now
        try carol.send(.ping(.init(requestID: "p1")))
        #expect(try carol.expect(.pong, timeout: .seconds(3)).replyTo == "p1")
        #expect(ContinuousClock.now - pingStart < .seconds(2))
        // A new device still signs in (its application is read on a connection of its own).
        let helloStart = ContinuousClock.now
        let dave = try harness.device("dave")
        #expect(ContinuousClock.now - helloStart < .seconds(2))
        try dave.send(.ping(.init(requestID: "p2")))
        #expect(try dave.expect(.pong).replyTo == "p2")

        // The hang-up's reply and call.ended come once the record is committed: after the lock.
        let reply = try alice.expect(.result, timeout: .seconds(15))
        #expect(reply.replyTo == hangupID)
        #expect(ContinuousClock.now - locked >= .seconds(6))
        #expect(try alice.expectEnded(callID, timeout: .seconds(5)).cause == "canceled")
        #expect(try bob.expectEnded(callID, timeout: .seconds(5)).cause == "canceled")
        let stored = try harness.storedCall(callID)
        #expect(stored?.state == .ended)
        #expect(stored?.endCause == .canceled)
        try lock.wait()
        #expect(harness.log.contains("store.write.retry"))
        #expect(harness.server.metrics.snapshot.storeWriteRetries > 0)
    }

    @Test func aCallStartedWhileTheStoreIsLockedIsAcknowledgedOnlyOnceItsRecordIsCommitted() throws {
        let harness = try ServerHarness()
        let alice = try harness.device("alice")
        let bob = try harness.device("bob")
        let lock = try StoreLockHolder(path: harness.directory + "/" + SQLiteStore.defaultFileName, seconds: 2)
        let locked = ContinuousClock.now
        let id = alice.requestID()
        let callID = newCallID()
        try alice.send(.callStart(.init(requestID: id, callID: callID, to: .user("bob"), headers: [:], sdp: try SDPPeer.offer())))
        // Bob hears of the call only once it is recorded, and alice's result comes first.
        let reply = try alice.expect(.result, timeout: .seconds(10))
        #expect(reply.replyTo == id)
        #expect(ContinuousClock.now - locked >= .seconds(1.5))
        #expect(try harness.storedCall(callID) != nil)
        try alice.expect(.callMedia)
        try alice.expect(.callProgress)
        #expect(try bob.expect(.callIncoming).callID == callID)
        try alice.request(SignalingMessage.callHangup, callID: callID)
        try lock.wait()
    }
}

/// Another process (python3's sqlite3) holding `BEGIN IMMEDIATE` on the store's file, as
/// a backup tool or an operator's `sqlite3` shell can.
final class StoreLockHolder {
    private let process = Process()
    private let output = Pipe()

    /// Returns once the lock is held; it is released after `seconds`.
    init(path: String, seconds: Double) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let script = """
            import sqlite3, sys, time
            connection = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
            connection.execute("BEGIN IMMEDIATE")
            print("locked", flush=True)
            time.sleep(float(sys.argv[2]))
            connection.execute("ROLLBACK")
            print("released", flush=True)
            """
        process.arguments = ["python3", "-c", script, path, String(seconds)]
        process.standardOutput = output
        try process.run()
        var seen = Data()
        let deadline = Date().addingTimeInterval(10)
        while !String(decoding: seen, as: UTF8.self).contains("locked"), Date() < deadline, process.isRunning {
            seen += output.fileHandleForReading.availableData
        }
        guard String(decoding: seen, as: UTF8.self).contains("locked") else {
            process.terminate()
            throw TestFailure("python3 could not lock \(path)")
        }
    }

    /// Waits for the lock holder to release and exit.
    func wait() throws {
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestFailure("the lock holder exited \(process.terminationStatus)") }
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}
