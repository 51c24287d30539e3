import Foundation
import ParleyCallModel
import ParleyNetCore
import ParleySDK
import ParleyServer
import ParleyStore
import Testing

/// Two SDK clients call through a real `ParleyServer` on loopback; after the hang-up each
/// device reports its playout counters (`call.stats`) and the call record keeps them on
/// its leg, equal to what the SDK's own statistics say.
extension RealTimeMediaTests {
@Suite(.serialized) struct SDKCallRecordPlayoutTests {
    let server: ParleyServer
    let application: Application
    let directory = NSTemporaryDirectory() + "parley-sdk-playout-" + UUID().uuidString

    init() throws {
        var configuration = ServerConfiguration(dataDirectory: directory, listenAddresses: [.ipv4Loopback(port: 0)])
        configuration.mediaBindAddress = .ipv4Loopback(port: 0)
        let base = UInt16(34_000 + Int.random(in: 0..<300) * 100)
        configuration.mediaPorts = base...(base + 99)
        configuration.edgeLoopCount = 1
        server = try ParleyServer(configuration: configuration, stores: .sqlite(dataDirectory: configuration.dataDirectory),
                                  log: ServerLog(level: .debug) { _ in })
        application = try #require(server.developmentApplication)
        try server.start()
    }

    func waitFor(_ what: @autoclosure () -> String, seconds: Double = 10, _ condition: () throws -> Bool) throws {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            if try condition() { return }
            Thread.sleep(forTimeInterval: 0.02)
        }
        Issue.record("timed out waiting for \(what())")
        throw Timeout(what: what())
    }

    func record(_ callID: String) throws -> StoredCall? {
        try server.store.performAndWait { (store) throws(StoreError) in try store.call(id: callID) }
    }

    static func expectSame(_ playout: CallLegPlayout?, _ statistics: ParleyCallStatistics, _ who: String) {
        guard let playout else {
            Issue.record("no playout on \(who)'s leg")
            return
        }
        #expect(playout.framesPlayed == Int64(statistics.framesPlayed), "\(who)")
        #expect(playout.framesConcealed == Int64(statistics.framesConcealed), "\(who)")
        #expect(playout.framesFECRecovered == Int64(statistics.framesFECRecovered), "\(who)")
        #expect(playout.framesComfortNoise == Int64(statistics.framesComfortNoise), "\(who)")
        #expect(playout.framesSilent == Int64(statistics.framesSilent), "\(who)")
        #expect(playout.framesStretched == Int64(statistics.framesStretched), "\(who)")
        #expect(playout.framesShrunk == Int64(statistics.framesShrunk), "\(who)")
        #expect(playout.packetsLate == Int64(statistics.packetsLate), "\(who)")
        #expect(playout.targetDelayMilliseconds == Int64(statistics.targetDelayMilliseconds.rounded()), "\(who)")
    }

    @Test func bothDevicesPlayoutCountersReachTheCallRecord() throws {
        defer {
            server.shutdown()
            try? FileManager.default.removeItem(atPath: directory)
        }
        let address = server.localAddresses[0]
        let alice = try SDKUser("alice", deviceId: "alice-phone", application: application, server: address, store: InMemoryPushRegistrationStore())
        let bob = try SDKUser("bob", deviceId: "bob-phone", application: application, server: address, store: InMemoryPushRegistrationStore())
        alice.client.audioController.source = .tone(frequency: 440)
        bob.client.audioController.source = .tone(frequency: 660)
        alice.client.start()
        bob.client.start()
        try waitFor("both starts") { alice.events.contains("started") && bob.events.contains("started") }
        let call = try alice.mediator.callUser(withId: "bob").get()
        try waitFor("bob's incoming call") { bob.incomingCalls.contains { $0.callId == call.callId } }
        let bobsCall = try #require(bob.incomingCalls.first { $0.callId == call.callId })
        bobsCall.answer()
        try waitFor("the media (alice heard \(alice.events))", seconds: 15) { alice.events.contains("established \(call.callId)") }
        // A second of audio each way.
        Thread.sleep(forTimeInterval: 1.2)
        call.hangup()
        try waitFor("both ends") { alice.events.contains("ended \(call.callId) hungUp") && bob.events.contains("ended \(call.callId) hungUp") }
        try waitFor("both devices' playout in the record", seconds: 10) {
            let legs = try record(call.callId)?.legs ?? []
            return legs.count == 2 && legs.allSatisfy { $0.playout != nil }
        }
        let stored = try #require(try record(call.callId))
        #expect(stored.legs.map(\.role) == [.caller, .callee])
        #expect(call.statistics.framesPlayed > 20 && bobsCall.statistics.framesPlayed > 20,
                "audio played: \(call.statistics.framesPlayed), \(bobsCall.statistics.framesPlayed)")
        Self.expectSame(stored.legs[0].playout, call.statistics, "alice")
        Self.expectSame(stored.legs[1].playout, bobsCall.statistics, "bob")
        // The REST record's JSON carries it as `legs[].playout`.
        let json = String(decoding: try JSONEncoder().encode(stored), as: UTF8.self)
        #expect(json.contains("\"playout\":{") && json.contains("\"framesConcealed\""))
        alice.client.terminateGracefully()
        bob.client.terminateGracefully()
    }
}
}
