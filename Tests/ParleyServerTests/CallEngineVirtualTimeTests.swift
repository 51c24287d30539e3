import Foundation
import ParleyAuth
import ParleyBus
import ParleyCallCore
import ParleyNetCore
@testable import ParleyServer
import ParleySignaling
import ParleyStore
import ParleyTestSupport
import Synchronization
import Testing

/// The call engine on a `ManualScheduler`: its hello timeout, heartbeat, reconnect grace
/// and call timers run in virtual time, with no socket (the engine talks to `TestSocket`s)
/// and no sleep. The store is the real SQLite store in a temporary directory; its answers
/// come from its own threads, which `run(until:)` waits for without sleeping.
@Suite struct CallEngineVirtualTimeTests {
    /// A WebSocket as the engine sees it, recording what the engine sends and closes.
    final class TestSocket: SignalingSocket {
        let id: UInt64
        let remoteDescription = "test"
        private let state = Mutex<(frames: [SignalingMessage], close: UInt16?)>(([], nil))

        init(id: UInt64) { self.id = id }

        func sendText(_ text: String) {
            guard let message = try? SignalingCodec.decode(text, sender: .serverToDevice) else {
                Issue.record("the engine sent a frame its own protocol refuses: \(text)")
                return
            }
            state.withLock { $0.frames.append(message) }
        }

        func close(code: UInt16, reason: String) { state.withLock { $0.close = code } }

        var frames: [SignalingMessage] { state.withLock { $0.frames } }
        var closeCode: UInt16? { state.withLock { $0.close } }
        func types() -> [SignalingMessageType] { frames.map(\.type) }
    }

    /// An engine, its scheduler and its store in a fresh directory.
    final class Rig: Sendable {
        let scheduler: ManualScheduler
        let engine: CallEngine
        let application: Application
        let configuration: ServerConfiguration
        let lines = LogLines()
        private let wallStart: Int64
        let start: ContinuousClock.Instant

        init(node: NodeID = .local, bus: any SignalingBus = LocalSignalingBus(), directory: any DeviceDirectory = LocalDeviceDirectory(),
             _ adjust: (inout ServerConfiguration) -> Void = { _ in }) throws {
            let dataDirectory = ServerHarness.temporaryDirectory()
            try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
            configuration = ServerHarness.configuration(directory: dataDirectory, adjust)
            let stores = try CallStoreFactory.sqlite(dataDirectory: dataDirectory)
            let store = try StoreQueue(opening: stores)
            let credentials = try ApplicationCredentials.generate()
            let wallStart = Int64(Date().timeIntervalSince1970 * 1000)
            application = try store.performAndWait { (store) throws(StoreError) in
                try store.createApplication(key: credentials.key, name: "virtual", secret: credentials.secret.base64, at: wallStart)
            }
            let scheduler = ManualScheduler()
            let start = scheduler.now
            self.scheduler = scheduler
            self.start = start
            self.wallStart = wallStart
            let lines = self.lines
            let log = ServerLog(level: .debug) { line in lines.append(line) }
            let metrics = ServerMetrics()
            engine = try CallEngine(
                loop: scheduler, configuration: configuration, log: log, metrics: metrics, store: store,
                helloStore: StoreQueue(opening: stores, label: "virtual.hello"),
                node: node, bus: bus, directory: directory, router: PresenceRouter(),
                recorder: CallRecorder(stores: stores, log: log, metrics: metrics), knownUsers: [],
                // The wall clock moves with the virtual one.
                wallClock: { wallStart + start.duration(to: scheduler.now).wholeMilliseconds },
                mediaAnchor: nil)
            scheduler.run()
        }

        var elapsed: Duration { start.duration(to: scheduler.now) }

        func open(_ id: UInt64) -> TestSocket {
            let socket = TestSocket(id: id)
            engine.socketOpened(socket, now: scheduler.now)
            scheduler.run()
            return socket
        }

        func send(_ message: SignalingMessage, on socket: TestSocket) {
            engine.socketReceived(SignalingCodec.encodeToString(message), on: socket.id, now: scheduler.now)
            scheduler.run()
        }

        /// `hello` as `user`, answered once the store's read thread replied.
        func signIn(_ user: String, on socket: TestSocket, resume: String? = nil) throws -> SignalingMessage.HelloOK {
            let issuedAt = (wallStart + elapsed.wholeMilliseconds) / 1000
            let token = try UserToken.mint(applicationKey: application.key, secret: application.secret, userID: user,
                                           issuedAt: issuedAt, lifetime: 600, nonce: try UserToken.randomNonce())
            let before = socket.frames.count
            send(.hello(.init(requestID: "h-\(user)", appKey: application.key, token: token, deviceID: "\(user)-phone",
                              sdk: .init(name: "test", version: "1"), resumeSessionID: resume)), on: socket)
            #expect(scheduler.run(until: { socket.frames.count > before }))
            let answers = socket.frames.dropFirst(before)
            for case .helloOK(let ok) in answers { return ok }
            throw TestFailure("hello refused: \(answers)")
        }

        func stop() {
            engine.stop()
            scheduler.stop()
        }
    }

    @Test func aSilentConnectionIsClosed4002AtTheHelloTimeoutInVirtualTime() throws {
        let rig = try Rig { $0.helloTimeout = .seconds(10) }
        defer { rig.stop() }
        let socket = rig.open(1)
        rig.scheduler.advance(by: .milliseconds(9_999))
        #expect(socket.closeCode == nil)
        rig.scheduler.advance(by: .milliseconds(1))
        #expect(socket.closeCode == 4002)
        #expect(rig.lines.text.contains("ws.hello.timeout"))
    }

    @Test func heartbeatTimeoutThenTheGraceThenTheSessionIsGone() throws {
        let rig = try Rig {
            $0.heartbeatInterval = .seconds(20)
            $0.reconnectGrace = .seconds(30)
        }
        defer { rig.stop() }
        let first = rig.open(1)
        let ok = try rig.signIn("alice", on: first)
        #expect(ok.heartbeatInterval == 20_000)
        // A ping at 30 s keeps it open past the first check at 40 s.
        rig.scheduler.advance(by: .seconds(30))
        rig.send(.ping(.init(requestID: "p1")), on: first)
        #expect(first.types().last == .pong)
        rig.scheduler.advance(by: .seconds(39))
        #expect(first.closeCode == nil)
        rig.scheduler.advance(by: .seconds(1))
        #expect(first.closeCode == 4004)
        rig.engine.socketClosed(1, code: 4004)
        rig.scheduler.run()

        // Within the grace the session resumes with its id; a second drop and the grace
        // passing end it, and a resume then gets a new session.
        let second = rig.open(2)
        let resumed = try rig.signIn("alice", on: second, resume: ok.sessionID)
        #expect(resumed.resumed)
        #expect(resumed.sessionID == ok.sessionID)
        rig.engine.socketClosed(2, code: 1006)
        rig.scheduler.advance(by: .seconds(30))
        #expect(rig.lines.text.contains("session.expired"))
        let third = rig.open(3)
        let fresh = try rig.signIn("alice", on: third, resume: ok.sessionID)
        #expect(!fresh.resumed)
        #expect(fresh.sessionID != ok.sessionID)
    }

    @Test func aCallWhoseCallerLegNeverComesUpEndsNoAnswerAtTheRingTimeout() throws {
        let rig = try Rig {
            $0.ringTimeout = .seconds(45)
            $0.heartbeatInterval = .seconds(120)
        }
        defer { rig.stop() }
        let alice = rig.open(1)
        let bob = rig.open(2)
        _ = try rig.signIn("alice", on: alice)
        _ = try rig.signIn("bob", on: bob)
        let callID = newCallID()
        rig.send(.callStart(.init(requestID: "start", callID: callID, to: .user("bob"), sdp: "v=0\r\n")), on: alice)
        // `result` waits for the new record's commit on the store's thread.
        #expect(rig.scheduler.run(until: { alice.types().contains(.result) }))
        // No media anchor here: the caller's leg never reports ready, so bob never rings.
        rig.scheduler.advance(by: .milliseconds(44_999))
        #expect(!alice.types().contains(.callEnded))
        #expect(!bob.types().contains(.callIncoming))
        rig.scheduler.advance(by: .milliseconds(1))
        #expect(rig.scheduler.run(until: { alice.types().contains(.callEnded) }, timeout: .seconds(2)),
                "\(alice.types()) \(rig.scheduler.nextDeadline.map { rig.start.duration(to: $0) } as Any)\n\(rig.lines.text)")
        guard case .callEnded(let ended)? = alice.frames.last(where: { $0.type == .callEnded }) else { return }
        #expect(ended.callID == callID)
        #expect(ended.cause == .noAnswer)
        #expect(rig.elapsed == .seconds(45))
    }

    @Test func aMessageForADeviceOnAnotherNodeGoesOverTheBusAndWaitsThereWhileItIsAway() throws {
        let bus = LocalSignalingBus()
        let directory = LocalDeviceDirectory()
        let nodeA = try Rig(node: NodeID("a"), bus: bus, directory: directory) { $0.reconnectGrace = .seconds(30) }
        let nodeB = try Rig(node: NodeID("b"), bus: bus, directory: directory) { $0.reconnectGrace = .seconds(30) }
        defer {
            nodeA.stop()
            nodeB.stop()
        }
        // Both nodes serve one application here (each has its own store, same key).
        let socket = nodeB.open(1)
        let ok = try nodeB.signIn("bob", on: socket)
        let bob = Device(user: AppUser(applicationKey: nodeB.application.key, userID: "bob"), deviceID: "bob-phone")
        #expect(directory.node(of: bob) == NodeID("b"))

        let ringing = SignalingMessage.callRinging(.init(callID: newCallID(), time: 1))
        nodeA.engine.deliver(ringing, to: bob)
        nodeA.scheduler.run()
        #expect(nodeA.lines.text.contains("signal.forwarded"))
        #expect(!socket.frames.contains(ringing))  // not before node b's loop ran it
        nodeB.scheduler.run()
        #expect(socket.frames.last == ringing)

        // Away: node b keeps it for the resume.
        nodeB.engine.socketClosed(1, code: 1006)
        nodeB.scheduler.run()
        let later = SignalingMessage.callRinging(.init(callID: newCallID(), time: 2))
        nodeA.engine.deliver(later, to: bob)
        nodeB.scheduler.run()
        let again = nodeB.open(2)
        let resumed = try nodeB.signIn("bob", on: again, resume: ok.sessionID)
        #expect(resumed.resumed)
        #expect(again.frames.contains(later))

        // The session ends with the grace: the directory forgets it, node a drops.
        nodeB.engine.socketClosed(2, code: 1006)
        nodeB.scheduler.advance(by: .seconds(30))
        #expect(directory.node(of: bob) == nil)
        nodeA.engine.deliver(ringing, to: bob)
        #expect(nodeA.lines.text.contains("signal.dropped"))
    }
}
