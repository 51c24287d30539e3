import Foundation
import Testing

extension EndToEndRealTimeMediaTests.SIPInteropBaresipTests {
    /// The Sinch-shaped call endpoints against a live call (docs/rest.md, "Calls"): a phone
    /// calls a number its backend routes to bob, who answers; `GET
    /// /calling/v1/calls/id/{callId}` describes it `ONGOING` from the phone's number to bob
    /// over `pstn`; a `PATCH` with SVAML `hangup` ends it (bob's call ends `hungUp`, the
    /// phone gets a BYE), the backend's DiCE says MANAGERHANGUP, and the GET then says
    /// `FINAL`, ANSWERED, MANAGERHANGUP.
    @Test func theVoiceAPIDescribesALiveCallAndAPatchHangsItUp() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let phone = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, backend) = try Self.backendGateway(phone: phone, number: "+46700000097") { key, secret in
            try TestBackend(directory: scratch, applicationKey: key, secret: secret, script: [
                "ice": ["action": ["name": "connectMxp", "destination": ["type": "username", "endpoint": "bob"]]],
            ])
        }
        let sipPort = try Self.sipPort(of: server)
        let bob = try SoftphoneProcess.listen("listen bob", on: server, as: "bob", ["--answer", "--tone", "440", "--duration", "30"])
        try phone.command("dial", "sip:+46700000097@127.0.0.1:\(sipPort)")
        let incoming = try bob.waitForEvent("incoming", timeout: 20)
        let callID = try #require(incoming["callId"] as? String)
        try bob.waitForEvent("established", timeout: 20)
        try phone.waitForCall(timeout: 10)
        // The call runs a while first, as when a backend ends a call it is watching.
        Thread.sleep(forTimeInterval: 2)

        let path = "/calling/v1/calls/id/\(callID)"
        let live = try server.get(path)
        #expect(live.status == 200, "\(live)")
        #expect(live.body?["status"] as? String == "ONGOING" && live.body?["domain"] as? String == "pstn", "\(live)")
        #expect(live.body?["from"] as? [String: String] == ["type": "number", "endpoint": "+4615550101"], "\(live)")
        #expect(live.body?["to"] as? [String: String] == ["type": "username", "endpoint": "bob"], "\(live)")

        let hangUp = try server.request("PATCH", path, body: ["instructions": [] as [Any], "action": ["name": "hangup"]])
        #expect(hangUp.status == 204, "\(hangUp)")
        let ended = try bob.waitForEvent("ended", timeout: 10)
        #expect(ended["cause"] as? String == "hungUp", "\(ended)")
        try phone.waitForCallEnd(timeout: 10)
        phone.stop()

        let dice = try backend.waitFor("dice")
        #expect(dice.body["result"] as? String == "ANSWERED" && dice.body["reason"] as? String == "MANAGERHANGUP", "\(dice.body)")
        let final = try server.get(path)
        #expect(final.body?["status"] as? String == "FINAL", "\(final)")
        #expect(final.body?["result"] as? String == "ANSWERED" && final.body?["reason"] as? String == "MANAGERHANGUP", "\(final)")
        let again = try server.request("PATCH", path, body: ["action": ["name": "hangup"]])
        #expect(again.status == 409 && again.body?["errorCode"] as? Int == 40900, "\(again)")
    }

    /// The "park then a REST PATCH that hangs up": a phone's call in is parked by
    /// its backend (no prompt, a minute's `maxDuration`), so the caller hears silence; a
    /// `PATCH` with `say` is spoken to the caller (the only speech in the recording); a
    /// `PATCH` with `hangup` ends the call at once (BYE to the phone), the DiCE says
    /// MANAGERHANGUP, and a second `PATCH` finds the call ended (its record); the GET says
    /// FINAL with the DiCE's result and reason.
    @Test func aParkedCallIsSpokenToAndHungUpThroughTheVoiceAPI() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let phone = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, backend) = try Self.backendGateway(phone: phone, number: "+46700000097") { key, secret in
            try TestBackend(directory: scratch, applicationKey: key, secret: secret, script: [
                "ice": ["action": ["name": "park", "maxDuration": 60]],
            ])
        }
        let sipPort = try Self.sipPort(of: server)
        try phone.command("dial", "sip:+46700000097@127.0.0.1:\(sipPort)")
        let callID = try #require(try backend.waitFor("ice").body["callid"] as? String)
        try phone.waitForCall(timeout: 10)
        let path = "/calling/v1/calls/id/\(callID)"

        let said = try server.request("PATCH", path, body: [
            "instructions": [["name": "say", "text": "Thank you for waiting", "locale": "en-US"]], "action": ["name": "park"],
        ])
        #expect(said.status == 204, "\(said)")
        // The sentence (about a second of speech), then the update's park, which names no
        // hold prompt: silence.
        Thread.sleep(forTimeInterval: 2.5)
        let hungUp = try server.request("PATCH", path, body: ["action": ["name": "hangup"]])
        #expect(hungUp.status == 204, "\(hungUp)")
        try phone.process.waitForLine(timeout: 10, "'session closed'") { $0.contains("session closed") || $0.contains("terminated (duration") }
        let heard = try phone.receivedRecording().path
        phone.stop()
        let dice = try backend.waitFor("dice")
        #expect(dice.body["result"] as? String == "ANSWERED" && dice.body["reason"] as? String == "MANAGERHANGUP", "\(dice.body)")
        #expect((dice.body["duration"] as? Int ?? 99) < 30, "\(dice.body)")
        let speech = try Self.voicedRatio(of: heard)
        #expect(speech.seconds >= 0.8, "speech heard: \(speech)")
        let final = try Self.finalInformation(server, path)
        #expect(final.body?["status"] as? String == "FINAL", "\(final)")
        #expect(final.body?["result"] as? String == "ANSWERED" && final.body?["reason"] as? String == "MANAGERHANGUP", "\(final)")
        // Ended: a second hang-up finds the call's record.
        #expect(try server.request("PATCH", path, body: ["action": ["name": "hangup"]]).status == 409)
    }
}
