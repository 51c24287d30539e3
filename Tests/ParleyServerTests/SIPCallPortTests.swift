import Foundation
import ParleyAuth
import ParleyCallModel
import ParleyCallCore
import ParleyCrypto
import ParleyNetCore
@testable import ParleyServer
import ParleySignaling
import ParleyStore
import ParleyTestSupport
import ParleyWireCore
import Synchronization
import Testing

/// The engine's SIP hook in virtual time: without a `SIPCallPort` calls to phone numbers
/// and SIP addresses are refused as before; with one they are placed, and the media
/// anchor opens the SIP party's plain RTP leg, whose offer the port is told.
@Suite struct SIPCallPortTests {
    /// A SIP user agent that records what it is told.
    final class RecordingSIPPort: SIPCallPort {
        private let state = Mutex<(attached: Int, told: [(SIPParty, CallNotification)])>((0, []))

        func attach(_ report: @escaping @Sendable (SIPCallEvent, SIPParty) -> Void) { state.withLock { $0.attached += 1 } }
        func tell(_ party: SIPParty, _ notification: CallNotification) { state.withLock { $0.told.append((party, notification)) } }

        var attached: Int { state.withLock { $0.attached } }
        var told: Int { state.withLock { $0.told.count } }
        var notifications: [CallNotification] { state.withLock { $0.told.map(\.1) } }
    }

    /// An engine with the media anchor on the same manual scheduler, its sockets in memory.
    final class Rig: Sendable {
        let scheduler = ManualScheduler()
        let engine: CallEngine
        let application: Application
        let lines = LogLines()
        let network = MemoryMediaNetwork()
        private let wallStart: Int64
        private let start: ContinuousClock.Instant

        init(sipCalls: (any SIPCallPort)?) throws {
            let dataDirectory = ServerHarness.temporaryDirectory()
            try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
            let configuration = ServerHarness.configuration(directory: dataDirectory)
            let stores = try CallStoreFactory.sqlite(dataDirectory: dataDirectory)
            let store = try StoreQueue(opening: stores)
            let credentials = try ApplicationCredentials.generate()
            let wallStart = Int64(Date().timeIntervalSince1970 * 1000)
            application = try store.performAndWait { (store) throws(StoreError) in
                try store.createApplication(key: credentials.key, name: "sip", secret: credentials.secret.base64, at: wallStart)
            }
            let scheduler = self.scheduler
            let start = scheduler.now
            self.start = start
            self.wallStart = wallStart
            let lines = self.lines
            let log = ServerLog(level: .debug) { line in lines.append(line) }
            let metrics = ServerMetrics()
            let ports = MemoryMediaPorts(network: network)
            let certificate = try DTLSCertificate.generate()
            engine = try CallEngine(
                loop: scheduler, configuration: configuration, log: log, metrics: metrics, store: store,
                helloStore: StoreQueue(opening: stores, label: "sip.hello"), sipCalls: sipCalls,
                recorder: CallRecorder(stores: stores, log: log, metrics: metrics), knownUsers: [],
                wallClock: { wallStart + start.duration(to: scheduler.now).wholeMilliseconds },
                mediaAnchor: { report in
                    MediaAnchor(
                        loop: scheduler, mediaLoops: [ManualMediaLoop(scheduler)], stopMediaLoops: {}, ports: ports,
                        configuration: configuration, certificate: certificate, log: log, metrics: metrics,
                        wallClockNanoseconds: { 1_800_000_000_000_000_000 }, report: report)
                })
            scheduler.run()
        }

        func open(_ id: UInt64) -> CallEngineVirtualTimeTests.TestSocket {
            let socket = CallEngineVirtualTimeTests.TestSocket(id: id)
            engine.socketOpened(socket, now: scheduler.now)
            scheduler.run()
            return socket
        }

        func send(_ message: SignalingMessage, on socket: CallEngineVirtualTimeTests.TestSocket) {
            engine.socketReceived(SignalingCodec.encodeToString(message), on: socket.id, now: scheduler.now)
            scheduler.run()
        }

        func signIn(_ user: String, on socket: CallEngineVirtualTimeTests.TestSocket) throws {
            let issuedAt = (wallStart + start.duration(to: scheduler.now).wholeMilliseconds) / 1000
            let token = try UserToken.mint(applicationKey: application.key, secret: application.secret, userID: user,
                                           issuedAt: issuedAt, lifetime: 600, nonce: try UserToken.randomNonce())
            send(.hello(.init(requestID: "h", appKey: application.key, token: token, deviceID: "\(user)-phone",
                              sdk: .init(name: "test", version: "1"))), on: socket)
            #expect(scheduler.run(until: { socket.types().contains(.helloOK) }))
        }

        func stop() {
            engine.stop()
            scheduler.stop()
        }
    }

    static let callID = "4b1e7c2a-9d3f-4e60-8a15-c27f3d9e0b44"

    /// Alice's `call.start` to a phone number, with a real device offer.
    static func phoneCall(network: MemoryMediaNetwork, scheduler: ManualScheduler) throws -> SignalingMessage {
        let device = try MediaAnchorVirtualTimeTests.Device(port: 5_000, frequency: 440, network: network, now: scheduler.now, seed: 1)
        return .callStart(.init(requestID: "c1", callID: callID, to: .phone("+46701234567"), sdp: try device.core.makeOffer(),
                                cli: "+46812345678"))
    }

    @Test func withoutASIPPortAPhoneCallIsRefusedNotImplementedAsBefore() throws {
        let rig = try Rig(sipCalls: nil)
        defer { rig.stop() }
        let socket = rig.open(1)
        try rig.signIn("alice", on: socket)
        rig.send(try Self.phoneCall(network: rig.network, scheduler: rig.scheduler), on: socket)
        #expect(rig.scheduler.run(until: { socket.types().contains(.error) }))
        guard case .error(let error)? = socket.frames.last else {
            Issue.record("no error: \(socket.types())")
            return
        }
        #expect(error.code == .notImplemented)
        #expect(error.field == "to.kind")
        #expect(error.message == "call \(Self.callID): this server places no calls to phone addresses: it has no SIP gateway configured (parleyd --sip-listen)")
    }

    @Test func withASIPPortAPhoneCallIsPlacedAndItsSIPLegOffered() throws {
        let port = RecordingSIPPort()
        let rig = try Rig(sipCalls: port)
        defer { rig.stop() }
        #expect(port.attached == 1)
        let socket = rig.open(1)
        try rig.signIn("alice", on: socket)
        rig.send(try Self.phoneCall(network: rig.network, scheduler: rig.scheduler), on: socket)
        #expect(rig.scheduler.run(until: { port.told > 0 }))
        #expect(socket.types().suffix(3) == [.result, .callMedia, .callProgress])
        // The SIP leg's offer, for the INVITE: plain RTP, G.711 first.
        guard case .offered(let offer)? = port.notifications.first else {
            Issue.record("no offer: \(port.notifications)")
            return
        }
        #expect(offer.sdp.contains("m=audio ") && offer.sdp.contains(" RTP/AVP 0 8 "), "\(offer.sdp)")
        #expect(offer.cli == "+46812345678")
    }

    @Test func theAnchorOpensASIPLegAndRefusesAnAnswerItCannotRead() throws {
        let scheduler = ManualScheduler()
        let network = MemoryMediaNetwork()
        let ports = MemoryMediaPorts(network: network)
        let reports = MediaAnchorVirtualTimeTests.Reports()
        let anchor = MediaAnchor(
            loop: scheduler, mediaLoops: [ManualMediaLoop(scheduler)], stopMediaLoops: {}, ports: ports,
            configuration: ServerHarness.configuration(directory: ServerHarness.temporaryDirectory()),
            certificate: try DTLSCertificate.generate(), log: ServerLog(level: .error) { _ in }, metrics: ServerMetrics(),
            wallClockNanoseconds: { 1_800_000_000_000_000_000 }, report: { event, _ in reports.add(event) })
        let party = SIPParty(callID: Self.callID, destination: .uri("sip:bob@pbx.example.com"))
        let time = ClockReading(instant: scheduler.now, unixMilliseconds: 1_800_000_000_000)
        anchor.perform(.offerCallee(callID: Self.callID, party: .sip(party)), applicationKey: "app", now: time)
        anchor.perform(.acceptAnswer(callID: Self.callID, party: .sip(party), answer: "v=0\r\n"), applicationKey: "app", now: time)
        anchor.perform(.bridge(callID: Self.callID, party: .sip(party)), applicationKey: "app", now: time)
        anchor.perform(.sendDTMF(callID: Self.callID, leg: .callee(.sip(party)), digits: "1"), applicationKey: "app", now: time)
        scheduler.run()
        #expect(reports.all.count == 2, "\(reports.all)")
        guard case .calleeLegReady(.sip(party), let offer)? = reports.all.first,
              case .legFailed(.callee(.sip(party)), let reason)? = reports.all.last else {
            Issue.record("\(reports.all)")
            return
        }
        #expect(offer.contains("RTP/AVP"))
        #expect(reason.hasPrefix("sdp"), "\(reason)")
        #expect(anchor.legCount == 1)
        _ = anchor.closeAll(callID: Self.callID, now: scheduler.now)
        #expect(ports.allocatedCount == 0)
        anchor.closeEverything()
    }
}
