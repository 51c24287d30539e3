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
import Testing

/// The engine's dialling policy in virtual time: the store's settings reach the registry
/// at start, with a `hello`, and at each refresh; refusals are counted per reason in
/// `/metrics` and logged; without a source nothing is checked and no family is rendered.
@Suite struct DiallingPolicyEngineTests {
    /// An engine with a recording SIP port (so phone calls are placed) and the dialling
    /// policy on, on a manual scheduler.
    final class Rig: Sendable {
        static let offer = DiallingPolicyEngineTests.offer
        let scheduler = ManualScheduler()
        let engine: CallEngine
        let store: StoreQueue
        let application: Application
        let metrics = ServerMetrics()
        let lines = LogLines()
        private let wallStart: Int64
        private let start: ContinuousClock.Instant

        init(settings: DiallingSettings, source: DiallingSettingsSource? = DiallingSettingsSource(refreshInterval: .seconds(5))) throws {
            let dataDirectory = ServerHarness.temporaryDirectory()
            try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
            let configuration = ServerHarness.configuration(directory: dataDirectory)
            let stores = try CallStoreFactory.sqlite(dataDirectory: dataDirectory)
            store = try StoreQueue(opening: stores)
            let credentials = try ApplicationCredentials.generate()
            let wallStart = Int64(Date().timeIntervalSince1970 * 1000)
            application = try store.performAndWait { (store) throws(StoreError) in
                try store.createApplication(key: credentials.key, name: "dialling", secret: credentials.secret.base64, at: wallStart)
                return try store.setDiallingSettings(applicationKey: credentials.key, settings)
            }
            let scheduler = self.scheduler
            let start = scheduler.now
            self.start = start
            self.wallStart = wallStart
            let lines = self.lines
            let log = ServerLog(level: .debug) { line in lines.append(line) }
            engine = try CallEngine(
                loop: scheduler, configuration: configuration, log: log, metrics: metrics, store: store,
                helloStore: StoreQueue(opening: stores, label: "dialling.hello"), sipCalls: SIPCallPortTests.RecordingSIPPort(),
                diallingSettings: source, recorder: CallRecorder(stores: stores, log: log, metrics: metrics), knownUsers: [],
                wallClock: { wallStart + start.duration(to: scheduler.now).wholeMilliseconds }, mediaAnchor: nil)
            scheduler.run()
        }

        func open(_ id: UInt64) -> CallEngineVirtualTimeTests.TestSocket {
            let socket = CallEngineVirtualTimeTests.TestSocket(id: id)
            engine.socketOpened(socket, now: scheduler.now)
            scheduler.run()
            return socket
        }

        func signIn(_ user: String, on socket: CallEngineVirtualTimeTests.TestSocket) throws {
            let issuedAt = (wallStart + start.duration(to: scheduler.now).wholeMilliseconds) / 1000
            let token = try UserToken.mint(applicationKey: application.key, secret: application.secret, userID: user,
                                           issuedAt: issuedAt, lifetime: 600, nonce: try UserToken.randomNonce())
            engine.socketReceived(SignalingCodec.encodeToString(.hello(.init(
                requestID: "h", appKey: application.key, token: token, deviceID: "\(user)-phone", sdk: .init(name: "test", version: "1")))),
                on: socket.id, now: scheduler.now)
            #expect(scheduler.run(until: { socket.types().contains(.helloOK) }))
        }

        /// Sends a call.start to `number` and returns the reply to it.
        func callPhone(_ number: String, callID: String, on socket: CallEngineVirtualTimeTests.TestSocket) -> SignalingMessage? {
            let before = socket.frames.count
            let start = SignalingMessage.CallStart(requestID: "c-\(callID.suffix(4))", callID: callID, to: .phone(number),
                                                   sdp: Self.offer, cli: "+46812345678")
            engine.socketReceived(SignalingCodec.encodeToString(.callStart(start)), on: socket.id, now: scheduler.now)
            _ = scheduler.run(until: {
                socket.frames.dropFirst(before).contains { if case .error = $0 { true } else if case .result = $0 { true } else { false } }
            })
            return socket.frames.dropFirst(before).first { if case .error = $0 { true } else if case .result = $0 { true } else { false } }
        }

        func setSettings(_ settings: DiallingSettings) throws {
            _ = try store.performAndWait { (store) throws(StoreError) in try store.setDiallingSettings(applicationKey: application.key, settings) }
        }

        func count(_ event: String) -> Int {
            lines.text.components(separatedBy: " \(event) ").count - 1
        }

        func stop() {
            engine.stop()
            scheduler.stop()
        }
    }

    /// What the caller's offer is does not matter: the engine runs without a media anchor.
    static let offer = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n"

    static func callID(_ index: Int) -> String { "9b1e7c2a-9d3f-4e60-8a15-c27f3d9e0b" + String(format: "%02x", index) }

    @Test func theStoresSettingsApplyFromTheStartAndRefusalsAreCountedAndLogged() throws {
        let rig = try Rig(settings: DiallingSettings(allowedNumberPrefixes: ["+47"]))
        defer { rig.stop() }
        let socket = rig.open(1)
        try rig.signIn("alice", on: socket)
        guard case .error(let error)? = rig.callPhone("+46701234567", callID: Self.callID(1), on: socket) else {
            throw TestFailure("not refused: \(socket.types())")
        }
        #expect(error.code == .destinationNotAllowed)
        #expect(error.field == "to.address")
        #expect(rig.metrics.snapshot.diallingRefusals == ["number_not_allowed": 1])
        #expect(rig.lines.text.contains("call.dialling.refused call=\(Self.callID(1)) app=\(rig.application.key) reason=number_not_allowed to=+46701234567 code=destination_not_allowed"))
        let text = MetricsRenderer.render(counters: rig.metrics.snapshot, liveCalls: [:])
        #expect(text.hasSuffix("""
            # HELP parley_dialling_refusals_total Calls to phone numbers and SIP addresses refused by their application's dialling settings, by reason.
            # TYPE parley_dialling_refusals_total counter
            parley_dialling_refusals_total{reason="number_not_allowed"} 1
            parley_dialling_refusals_total{reason="sip_not_allowed"} 0
            parley_dialling_refusals_total{reason="no_cli"} 0
            parley_dialling_refusals_total{reason="concurrent_limit"} 0
            parley_dialling_refusals_total{reason="per_minute_limit"} 0

            """))
        // An allowed number is placed.
        guard case .result? = rig.callPhone("+4790123456", callID: Self.callID(2), on: socket) else {
            throw TestFailure("refused: \(socket.types())")
        }
    }

    @Test func aChangeInTheStoreAppliesAtTheNextRefreshAndAtTheNextHello() throws {
        let rig = try Rig(settings: DiallingSettings())
        defer { rig.stop() }
        let alice = rig.open(1)
        try rig.signIn("alice", on: alice)
        guard case .error? = rig.callPhone("+46701234567", callID: Self.callID(1), on: alice) else { throw TestFailure("not refused") }

        // An admin command (another connection) allows +46: a new sign-in brings it along at once.
        try rig.setSettings(DiallingSettings(allowedNumberPrefixes: ["+46"]))
        let bob = rig.open(2)
        try rig.signIn("bob", on: bob)
        guard case .result? = rig.callPhone("+46701234567", callID: Self.callID(2), on: bob) else {
            throw TestFailure("the hello's settings were not used: \(bob.types())")
        }

        // Closed again: alice, signed in before, follows at the next refresh.
        try rig.setSettings(DiallingSettings())
        let refreshes = rig.count("dialling.settings.refreshed")
        rig.scheduler.advance(by: .seconds(5))
        #expect(rig.scheduler.run(until: { rig.count("dialling.settings.refreshed") > refreshes }))
        guard case .error(let error)? = rig.callPhone("+46701234567", callID: Self.callID(3), on: alice) else {
            throw TestFailure("the refresh did not apply")
        }
        #expect(error.code == .destinationNotAllowed)
        #expect(rig.metrics.snapshot.diallingRefusals?["number_not_allowed"] == 2)
    }

    @Test func withoutASourceNothingIsCheckedAndNoFamilyIsRendered() throws {
        let rig = try Rig(settings: DiallingSettings(), source: nil)
        defer { rig.stop() }
        let socket = rig.open(1)
        try rig.signIn("alice", on: socket)
        guard case .result? = rig.callPhone("+46701234567", callID: Self.callID(1), on: socket) else {
            throw TestFailure("refused without a policy: \(socket.types())")
        }
        #expect(rig.metrics.snapshot.diallingRefusals == nil)
        #expect(!MetricsRenderer.render(counters: rig.metrics.snapshot, liveCalls: [:]).contains("parley_dialling"))
    }
}
