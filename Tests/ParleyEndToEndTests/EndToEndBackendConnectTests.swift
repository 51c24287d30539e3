import Foundation
import Testing

extension EndToEndRealTimeMediaTests.SIPInteropBaresipTests {
    /// A phone calls a number whose backend answers `runMenu`: parleyd answers the call
    /// itself, and `GET /calling/v1/calls/id/{callId}` finds it `ONGOING` from the phone to
    /// the number dialled. The phone keys 1; the PIE's answer says something, then
    /// `connectPstn` to a second baresip behind the trunk: the caller's answered leg is
    /// bridged to the call out, the tones cross both ways, the caller hangs up (parleyd's
    /// BYE reaches the callee). The DiCE says ANSWERED, CALLERHANGUP, its duration from
    /// parleyd's answer; the GET after it says the same, and the record keeps the number
    /// dialled and a SIP Call-ID.
    @Test func aMenuAnsweredByTheServerGoesOnToConnectPstn() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let callee = try BaresipPeer(user: "+4615550202", tone: 440)
        let caller = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, maybeBackend) = try Self.bridgeGateway(trunk: callee.address, scratch: scratch, rule: { "+46700000089=\($0)" }, script: [
            "ice": ["action": ["name": "runMenu", "menus": [[
                "id": "main", "mainPrompt": "#tts[Press one for sales]", "timeoutMills": 8000,
                "options": [["dtmf": "1", "action": "return(sales)"]],
            ]]]],
            "pie": ["instructions": [["name": "say", "text": "Connecting."]],
                    "action": ["name": "connectPstn", "number": "+4615550202", "maxDuration": 60]],
            "ace": ["action": ["name": "continue"]],
        ])
        let backend = try #require(maybeBackend)
        let sipPort = try Self.sipPort(of: server)
        try caller.command("dial", "sip:+46700000089@127.0.0.1:\(sipPort)")
        let callID = try #require(try backend.waitFor("ice").body["callid"] as? String)
        try caller.waitForCall(timeout: 10)
        let path = "/calling/v1/calls/id/\(callID)"
        let answered = try server.get(path)
        #expect(answered.status == 200 && answered.body?["status"] as? String == "ONGOING", "\(answered)")
        #expect(answered.body?["from"] as? [String: String] == ["type": "number", "endpoint": "+4615550101"], "\(answered)")
        #expect(answered.body?["to"] as? [String: String] == ["type": "number", "endpoint": "+46700000089"], "\(answered)")

        Thread.sleep(forTimeInterval: 1.0)
        try caller.sendDTMF("1")
        let pie = try backend.waitFor("pie")
        #expect((pie.body["menuResult"] as? [String: Any])?["value"] as? String == "sales", "\(pie.body)")
        try callee.waitForCall(timeout: 20)
        let ace = try backend.waitFor("ace")
        #expect(ace.body["callid"] as? String == callID, "\(ace.body)")
        #expect(try server.get(path).body?["status"] as? String == "ONGOING")
        try Self.talkAfterTheServersAnswerAndHangUp(caller: caller, callee: callee, hangingUp: caller)

        let dice = try backend.waitFor("dice")
        #expect(dice.body["result"] as? String == "ANSWERED" && dice.body["reason"] as? String == "CALLERHANGUP", "\(dice.body)")
        #expect((dice.body["duration"] as? Int ?? 0) >= 6, "the menu, the ringing and the talk: \(dice.body)")
        let final = try Self.finalInformation(server, path)
        #expect(final.body?["status"] as? String == "FINAL", "\(final)")
        #expect(final.body?["result"] as? String == "ANSWERED" && final.body?["reason"] as? String == "CALLERHANGUP", "\(final)")
        #expect(final.body?["duration"] as? Int == dice.body["duration"] as? Int, "\(final) \(dice.body)")
        let record = try server.get("/v1/calls/\(callID)")
        #expect(record.body?["caller"] as? String == "+4615550101" && record.body?["callee"] as? String == "+46700000089", "\(record)")
        #expect(record.body?["endCause"] as? String == "hungUp" && record.body?["sipStatus"] as? Int == 200, "\(record)")
        #expect(record.body?["sipCallId"] as? String != nil, "\(record)")
    }

    /// A parked call (its hold prompt looping) is moved on by a REST `PATCH` with
    /// `connectSip` to `bob@pbx.test` with a private header: bob's baresip rings and
    /// answers, the tones cross, bob hangs up and the caller gets parleyd's BYE. The DiCE
    /// and the GET say ANSWERED, CALLEEHANGUP.
    @Test func aParkedCallIsPatchedOnToConnectSip() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let callee = try BaresipPeer(user: "bob", tone: 440)
        let caller = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, maybeBackend) = try Self.bridgeGateway(trunk: callee.address, scratch: scratch, rule: { "+46700000088=\($0)" }, script: [
            "ice": ["action": ["name": "park", "holdPrompt": "#tts[Please hold]", "maxDuration": 60]],
        ])
        let backend = try #require(maybeBackend)
        let sipPort = try Self.sipPort(of: server)
        try caller.command("dial", "sip:+46700000088@127.0.0.1:\(sipPort)")
        let callID = try #require(try backend.waitFor("ice").body["callid"] as? String)
        try caller.waitForCall(timeout: 10)
        let path = "/calling/v1/calls/id/\(callID)"
        let patched = try server.request("PATCH", path, body: ["action": [
            "name": "connectSip", "destination": ["type": "sip", "endpoint": "sip:bob@pbx.test"],
            "callHeaders": [["key": "x-ticket", "value": "7"]],
        ]])
        #expect(patched.status == 204, "\(patched)")
        try callee.waitForCall(timeout: 20)
        try Self.talkAfterTheServersAnswerAndHangUp(caller: caller, callee: callee, hangingUp: callee)
        let dice = try backend.waitFor("dice")
        #expect(dice.body["result"] as? String == "ANSWERED" && dice.body["reason"] as? String == "CALLEEHANGUP", "\(dice.body)")
        let final = try Self.finalInformation(server, path)
        #expect(final.body?["status"] as? String == "FINAL", "\(final)")
        #expect(final.body?["result"] as? String == "ANSWERED" && final.body?["reason"] as? String == "CALLEEHANGUP", "\(final)")
        let again = try server.request("PATCH", path, body: ["action": ["name": "hangup"]])
        #expect(again.status == 409, "\(again)")
    }

    /// `say` then `connectPstn` to a callee that is busy (SIPp answers 486): the caller
    /// hears the sentence (parleyd answered it to speak), then gets parleyd's BYE, since
    /// it has our 200 OK already; the DiCE says BUSY, and so does the GET.
    @Test func aPromptThenConnectPstnToABusyCalleeEndsTheCallWithBusy() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let busy = try SIPpPeer(scenario: "uas-busy")
        let caller = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, maybeBackend) = try Self.bridgeGateway(trunk: busy.address, scratch: scratch, rule: { "+46700000087=\($0)" }, script: [
            "ice": ["instructions": [["name": "say", "text": "Please wait while we connect you.", "locale": "en-US"]],
                    "action": ["name": "connectPstn", "number": "+4615550202"]],
        ])
        let backend = try #require(maybeBackend)
        let sipPort = try Self.sipPort(of: server)
        try caller.command("dial", "sip:+46700000087@127.0.0.1:\(sipPort)")
        let callID = try #require(try backend.waitFor("ice").body["callid"] as? String)
        try caller.waitForCall(timeout: 10)
        try Self.waitForHangUp(of: caller, timeout: 20)
        let heard = try caller.receivedRecording().path
        caller.stop()
        #expect(try busy.waitForExit(timeout: 20) == 0, "\(busy.report)")
        let dice = try backend.waitFor("dice")
        #expect(dice.body["result"] as? String == "BUSY", "\(dice.body)")
        let final = try Self.finalInformation(server, "/calling/v1/calls/id/\(callID)")
        #expect(final.body?["status"] as? String == "FINAL", "\(final)")
        #expect(final.body?["result"] as? String == "BUSY" && final.body?["reason"] as? String == dice.body["reason"] as? String, "\(final)")
        let speech = try Self.voicedRatio(of: heard)
        #expect(speech.seconds >= 1, "the sentence before the call out: \(speech)")
    }

    /// `GET path` once it says `FINAL` (the DiCE goes out as the call ends, its record's
    /// end is written a moment later, once the legs' figures are in), at most 10 s.
    static func finalInformation(_ server: ParleydInstance, _ path: String) throws -> (status: Int, body: [String: Any]?) {
        let deadline = Date(timeIntervalSinceNow: 10)
        while true {
            let answer = try server.get(path)
            if answer.body?["status"] as? String == "FINAL" || Date() >= deadline { return answer }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Lets a call the server answered and bridged run 5 s, hangs it up from `hangingUp`'s
    /// side and waits for both ends. The callee heard the caller's 1000 Hz in most of its
    /// recording; the caller's recording starts at parleyd's answer (prompts, then
    /// silence while the callee rang), so it must hold 4 s of the callee's 440 Hz.
    static func talkAfterTheServersAnswerAndHangUp(caller: BaresipPeer, callee: BaresipPeer, hangingUp: BaresipPeer,
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
        let timeline = try ToneTimeline(path: callerHeard, frequency: 440)
        #expect(timeline.seconds(in: 0..<timeline.present.count) >= 4, "the caller heard \(timeline.seconds(in: 0..<timeline.present.count)) s of 440 Hz",
                sourceLocation: sourceLocation)
        let last = timeline.present.count
        #expect(timeline.seconds(in: (last - 150)..<(last - 25)) >= 2, "the callee's tone until the end", sourceLocation: sourceLocation)
    }
}
