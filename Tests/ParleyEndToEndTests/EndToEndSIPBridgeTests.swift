import Foundation
import Testing

extension EndToEndRealTimeMediaTests.SIPInteropBaresipTests {
    /// A parleyd whose trunk is `trunk` (`127.0.0.1:PORT`), whose application may dial
    /// `+46` numbers and SIP addresses, with the `--sip-number` rule `rule(KEY)` and, when `script` is given, a
    /// test backend answering from it (set before the restart, so the first call finds
    /// both the backend and the dialling settings).
    /// `pbx.test` is routed to the trunk as well, and SIP addresses may be dialled.
    static func bridgeGateway(trunk: String, scratch: URL, rule: (String) -> String, script: [String: Any]? = nil) throws
        -> (server: ParleydInstance, backend: TestBackend?) {
        let server = try ParleydInstance(flags: [
            "--sip-listen", "127.0.0.1:0", "--sip-trunk", "sip:\(trunk);transport=udp", "--sip-route", "pbx.test=\(trunk)",
        ]) { key in ["--sip-number", rule(key)] }
        try server.admin(["set-dialling", server.applicationKey, "--allow-prefix", "+46", "--sip", "on"])
        var backend: TestBackend?
        if let script {
            let test = try TestBackend(directory: scratch, applicationKey: server.applicationKey, secret: server.secret, script: script)
            try server.admin(["callback", "set", server.applicationKey, "http://127.0.0.1:\(test.port)/sinch/callback", "--timeout-ms", "3000"])
            backend = test
        }
        server.process?.killHard()
        try server.start()
        return (server, backend)
    }

    /// A phone calls a number its backend bridges to another number (docs/sip.md, "Bridged
    /// calls"): the backend's `connectPstn` sends parleyd's INVITE to the trunk, where a
    /// second baresip answers; each phone hears the other's tone (1000 Hz one way, 440 Hz
    /// the other, PCMU relayed untranscoded); the caller hangs up and the callee gets
    /// parleyd's BYE. The record is `phoneToPhone`, the DiCE ANSWERED, CALLERHANGUP.
    @Test func aPhoneCallBridgedByTheBackendToANumberCarriesTonesBothWaysAndTheCallerHangsUp() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let callee = try BaresipPeer(user: "+4615550202", tone: 440)
        let caller = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, maybeBackend) = try Self.bridgeGateway(trunk: callee.address, scratch: scratch, rule: { "+46700000096=\($0)" }, script: [
            "ice": ["action": ["name": "connectPstn", "number": "+4615550202", "maxDuration": 60]],
        ])
        let backend = try #require(maybeBackend)
        let sipPort = try Self.sipPort(of: server)
        try caller.command("dial", "sip:+46700000096@127.0.0.1:\(sipPort)")
        let ice = try backend.waitFor("ice")
        let callID = try #require(ice.body["callid"] as? String)
        try callee.waitForCall(timeout: 20)
        try caller.waitForCall(timeout: 20)
        // The call out presents the caller's number (no cli in the SVAML).
        #expect(callee.process.lines.contains { $0.contains("+4615550101") }, "\(callee.report)")
        try Self.talkAndHangUp(caller: caller, callee: callee, hangingUp: caller)

        // Both phones speak PCMU only: the call out was offered it first and the gateway relays.
        let bridged = (server.process?.errorText ?? "").split(separator: "\n").filter { $0.contains("media.bridge") }
        #expect(bridged.count == 1 && bridged.allSatisfy { $0.contains("relay") }, "\(bridged)")
        let record = try server.get("/v1/calls/\(callID)")
        #expect(record.body?["direction"] as? String == "phoneToPhone", "\(record)")
        #expect(record.body?["caller"] as? String == "+4615550101" && record.body?["callee"] as? String == "+4615550202", "\(record)")
        #expect(record.body?["endCause"] as? String == "hungUp", "\(record)")
        #expect(record.body?["sipStatus"] as? Int == 200, "\(record)")
        let dice = try backend.waitFor("dice")
        #expect(dice.body["result"] as? String == "ANSWERED" && dice.body["reason"] as? String == "CALLERHANGUP", "\(dice.body)")
    }

    /// A number whose static rule bridges it (`NUMBER=KEY:number:+E164`): the tones cross,
    /// and this time the callee hangs up: its BYE reaches parleyd, which sends BYE to the
    /// caller.
    @Test func aNumberRuleBridgesToANumberAndTheCalleeHangsUp() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let callee = try BaresipPeer(user: "+4615550202", tone: 440)
        let caller = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, _) = try Self.bridgeGateway(trunk: callee.address, scratch: scratch, rule: { "+46700000095=\($0):number:+4615550202" })
        let sipPort = try Self.sipPort(of: server)
        try caller.command("dial", "sip:+46700000095@127.0.0.1:\(sipPort)")
        try callee.waitForCall(timeout: 20)
        try caller.waitForCall(timeout: 20)
        try Self.talkAndHangUp(caller: caller, callee: callee, hangingUp: callee)
    }

    /// A bridged call out that is busy (SIPp answers 486): the caller gets 486 Busy Here,
    /// and parleyd acknowledges SIPp's 486.
    @Test func aBusyCallOutGivesTheCaller486() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let busy = try SIPpPeer(scenario: "uas-busy")
        let caller = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, _) = try Self.bridgeGateway(trunk: busy.address, scratch: scratch, rule: { "+46700000094=\($0):number:+4615550202" })
        let sipPort = try Self.sipPort(of: server)
        try caller.command("dial", "sip:+46700000094@127.0.0.1:\(sipPort)")
        try caller.process.waitForLine(timeout: 15, "'486 Busy Here'") { $0.contains("486 Busy Here") }
        #expect(try busy.waitForExit(timeout: 20) == 0, "\(busy.report)")
        caller.stop()
    }

    /// The call out's far side answers 183 with SDP and plays a 1.5 s ringback of 1000 Hz,
    /// then 200 2.5 s later (scripts/sipp/uas-early-media.xml): parleyd relays the early
    /// media to the caller with a 183 of its own, so the caller (sending 440 Hz) hears the
    /// ringback before the answer; its hang-up reaches SIPp as parleyd's BYE.
    @Test func earlyMediaOfTheCallOutReachesTheCallerBeforeTheAnswer() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let far = try SIPpPeer(scenario: "uas-early-media", workingDirectory: EndToEndSIPTests.repository.appendingPathComponent("scripts/sipp"))
        let caller = try BaresipPeer(user: "+4615550101", tone: 440)
        let (server, _) = try Self.bridgeGateway(trunk: far.address, scratch: scratch, rule: { "+46700000093=\($0):number:+4615550202" })
        let sipPort = try Self.sipPort(of: server)
        try caller.command("dial", "sip:+46700000093@127.0.0.1:\(sipPort)")
        try caller.waitForCall(timeout: 20)
        Thread.sleep(forTimeInterval: 1)
        try caller.hangUp()
        try caller.waitForCallEnd(timeout: 10)
        let callerHeard = try caller.receivedRecording().path
        caller.stop()
        #expect(try far.waitForExit(timeout: 20) == 0, "\(far.report)")
        let early = (server.process?.errorText ?? "").split(separator: "\n").filter { $0.contains("sip.inbound.early_media") }
        #expect(early.count == 1, "\(early)")
        // The far side played 1000 Hz only before its 200; jitter buffers may cost a little.
        let timeline = try ToneTimeline(path: callerHeard, frequency: 1000)
        #expect(timeline.seconds(in: 0..<timeline.present.count) >= 1.2, "the caller heard \(timeline.seconds(in: 0..<timeline.present.count)) s of ringback")
    }

    /// The backend answers `connectSip` to `bob@pbx.test` (routed to a baresip `bob`) with
    /// a private header: the call is bridged to that SIP address, the tones cross, the
    /// record is `phoneToSip`, and the callee's hang-up ends the caller's call.
    @Test func aPhoneCallBridgedByTheBackendToASIPAddress() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let callee = try BaresipPeer(user: "bob", tone: 440)
        let caller = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, maybeBackend) = try Self.bridgeGateway(trunk: callee.address, scratch: scratch, rule: { "+46700000092=\($0)" }, script: [
            "ice": ["action": ["name": "connectSip", "destination": ["type": "sip", "endpoint": "sip:bob@pbx.test"],
                               "callHeaders": [["key": "x-ticket", "value": "7"]]]],
        ])
        let backend = try #require(maybeBackend)
        let sipPort = try Self.sipPort(of: server)
        try caller.command("dial", "sip:+46700000092@127.0.0.1:\(sipPort)")
        let callID = try #require(try backend.waitFor("ice").body["callid"] as? String)
        try callee.waitForCall(timeout: 20)
        try caller.waitForCall(timeout: 20)
        try Self.talkAndHangUp(caller: caller, callee: callee, hangingUp: callee)
        let record = try server.get("/v1/calls/\(callID)")
        #expect(record.body?["direction"] as? String == "phoneToSip", "\(record)")
        #expect(record.body?["callee"] as? String == "bob@pbx.test", "\(record)")
        let dice = try backend.waitFor("dice")
        #expect(dice.body["result"] as? String == "ANSWERED" && dice.body["reason"] as? String == "CALLEEHANGUP", "\(dice.body)")
    }

    /// The callee speaks PCMA only, the caller PCMU: the call out is offered PCMU first,
    /// the callee answers PCMA, and the gateway transcodes between the two (G.711 to 48 kHz
    /// and back) instead of refusing; the tones still cross both ways.
    @Test func aCalleeOnAnotherCodecIsTranscoded() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let callee = try BaresipPeer(user: "+4615550202", tone: 440, codec: "PCMA")
        let caller = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, _) = try Self.bridgeGateway(trunk: callee.address, scratch: scratch, rule: { "+46700000091=\($0):number:+4615550202" })
        let sipPort = try Self.sipPort(of: server)
        try caller.command("dial", "sip:+46700000091@127.0.0.1:\(sipPort)")
        try callee.waitForCall(timeout: 20)
        try caller.waitForCall(timeout: 20)
        try Self.talkAndHangUp(caller: caller, callee: callee, hangingUp: caller)
        let bridged = (server.process?.errorText ?? "").split(separator: "\n").filter { $0.contains("media.bridge") }
        #expect(bridged.count == 1 && bridged.allSatisfy { $0.contains("transcode") }, "\(bridged)")
    }

    /// Lets the bridged call run 5 s, hangs it up from `hangingUp`'s side, waits for both
    /// phones' ends, and checks each heard the other's tone (caller 1000 Hz, callee 440 Hz)
    /// in most of its recording.
    static func talkAndHangUp(caller: BaresipPeer, callee: BaresipPeer, hangingUp: BaresipPeer,
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        Thread.sleep(forTimeInterval: 5)
        try hangingUp.hangUp()
        try hangingUp.waitForCallEnd(timeout: 10)
        try (hangingUp === caller ? callee : caller).waitForCallEnd(timeout: 10)
        let callerHeard = try caller.receivedRecording().path
        let calleeHeard = try callee.receivedRecording().path
        caller.stop()
        callee.stop()
        try expectTone(1000, in: calleeHeard, minimumRatio: 0.75, sourceLocation: sourceLocation)
        try expectTone(440, in: callerHeard, minimumRatio: 0.75, sourceLocation: sourceLocation)
    }
}
