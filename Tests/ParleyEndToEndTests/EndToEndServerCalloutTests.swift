import Foundation
import ParleyMediaCore
import Testing

extension EndToEndRealTimeMediaTests.SIPInteropBaresipTests {
    /// The voiced seconds of `text` as espeak-ng speaks it here, rendered the way parleyd
    /// renders a prompt (`--stdout`, `-v en-us`, the text on stdin), measured as the
    /// recordings are: frames louder than -40 dBFS.
    static func localSpeechSeconds(_ text: String, scratch: URL) throws -> Double {
        let path = scratch.appendingPathComponent("local-\(UUID().uuidString).wav").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/espeak-ng")
        process.arguments = ["-v", "en-us", "-w", path, text]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return try voicedRatio(of: path).seconds
    }

    /// A `ttsCallout` to a number (docs/rest.md, "Callouts"): parleyd's INVITE goes through
    /// the trunk (baresip stands in for the phone and answers at once) presenting the
    /// request's CLI; the phone hears the text spoken (as long as espeak-ng speaks it
    /// here, within a margin), then parleyd hangs up with BYE. The DiCE (`enableDice`)
    /// says ANSWERED, MANAGERHANGUP; `GET /calling/v1/calls/id/{callId}` and the record
    /// find the callout ended, `calloutToPhone` from the CLI to the number.
    @Test func aTTSCalloutToANumberSpeaksItsTextThenHangsUp() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let phone = try BaresipPeer(user: "+4615550202", tone: 440)
        let (server, maybeBackend) = try Self.bridgeGateway(trunk: phone.address, scratch: scratch, rule: { "+46700000096=\($0)" }, script: [:])
        let backend = try #require(maybeBackend)
        let text = "Hello from Parley. Your verification code is one two three four. Goodbye."
        let placed = try server.request("POST", "/calling/v1/callouts", body: [
            "method": "ttsCallout",
            "ttsCallout": [
                "destination": ["type": "number", "endpoint": "+46 155 502 02"], "cli": "+46700000001", "locale": "en-US",
                "text": text, "enableDice": true, "custom": "order-7",
            ] as [String: Any],
        ])
        #expect(placed.status == 200, "\(placed)")
        let callID = try #require(placed.body?["callId"] as? String)
        try phone.waitForCall(timeout: 20)
        #expect(phone.process.lines.contains { $0.contains("+46700000001") }, "the INVITE presents the cli: \(phone.report)")
        try Self.waitForHangUp(of: phone, timeout: 30)
        let heard = try phone.receivedRecording().path
        phone.stop()

        let dice = try backend.waitFor("dice")
        #expect(dice.body["callid"] as? String == callID, "\(dice.body)")
        #expect(dice.body["result"] as? String == "ANSWERED" && dice.body["reason"] as? String == "MANAGERHANGUP", "\(dice.body)")
        #expect(dice.body["custom"] as? String == "order-7", "\(dice.body)")
        #expect((dice.body["to"] as? [String: Any])?["endpoint"] as? String == "+4615550202", "\(dice.body)")
        #expect(!backend.received.contains { $0["event"] as? String == "ace" }, "no ACE without enableAce")

        let speech = try Self.voicedRatio(of: heard)
        let expected = try Self.localSpeechSeconds(text, scratch: scratch)
        #expect(expected > 2, "espeak-ng speaks the text here: \(expected) s")
        #expect(abs(speech.seconds - expected) <= max(0.6, expected * 0.25), "heard \(speech.seconds) s of speech, espeak-ng makes \(expected) s")
        // Speech, not a tone: the phone's recording is not one frequency held.
        let levels = try ToneLevels(path: heard, frequencies: [440, 1000])
        #expect(levels.share(of: 440, above: -30) < 0.2 && levels.share(of: 1000, above: -30) < 0.2, "no steady tone in what was heard")

        let information = try server.request("GET", "/calling/v1/calls/id/\(callID)")
        #expect(information.status == 200 && information.body?["status"] as? String == "FINAL", "\(information)")
        #expect(information.body?["result"] as? String == "ANSWERED", "\(information)")
        #expect((information.body?["from"] as? [String: Any])?["endpoint"] as? String == "+46700000001", "\(information)")
        #expect((information.body?["to"] as? [String: Any])?["endpoint"] as? String == "+4615550202", "\(information)")
        let record = try server.get("/v1/calls/\(callID)")
        #expect(record.body?["direction"] as? String == "calloutToPhone" && record.body?["endCause"] as? String == "hungUp", "\(record)")
        #expect(record.body?["sipStatus"] as? Int == 200, "\(record)")
    }

    /// A `customCallout`: its `ice` `connectPstn` places the call through the trunk, its
    /// `ace` says a text then hangs up. The phone hears the speech and parleyd's BYE; the
    /// DiCE says ANSWERED, MANAGERHANGUP, and no ACE went to the backend (the inline `ace`
    /// answers it). A number the application may not call is refused at once (403), and
    /// SVAML that is not SVAML is refused 400.
    @Test func aCustomCalloutRunsItsACEOnTheAnsweredCall() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let phone = try BaresipPeer(user: "+4615550202", tone: 440)
        let (server, maybeBackend) = try Self.bridgeGateway(trunk: phone.address, scratch: scratch, rule: { "+46700000096=\($0)" }, script: [:])
        let backend = try #require(maybeBackend)
        func callout(_ ice: [String: Any], ace: [String: Any]? = nil) throws -> (status: Int, body: [String: Any]?) {
            var details: [String: Any] = ["ice": String(decoding: try JSONSerialization.data(withJSONObject: ice), as: UTF8.self)]
            if let ace { details["ace"] = String(decoding: try JSONSerialization.data(withJSONObject: ace), as: UTF8.self) }
            return try server.request("POST", "/calling/v1/callouts", body: ["method": "customCallout", "customCallout": details])
        }
        let forbidden = try callout(["action": ["name": "connectPstn", "number": "+15550100", "cli": "+46700000001"]])
        #expect(forbidden.status == 403 && forbidden.body?["errorCode"] as? Int == 40300, "\(forbidden)")
        let garbage = try server.request("POST", "/calling/v1/callouts", body: ["method": "customCallout", "customCallout": ["ice": "{\"action\":"]])
        #expect(garbage.status == 400 && garbage.body?["errorCode"] as? Int == 40000, "\(garbage)")

        let text = "This call was placed by a custom callout. Goodbye."
        let placed = try callout(
            ["action": ["name": "connectPstn", "number": "+4615550202", "cli": "+46700000002", "maxDuration": 60]],
            ace: ["instructions": [["name": "say", "text": text, "locale": "en-US"]], "action": ["name": "hangup"]])
        #expect(placed.status == 200, "\(placed)")
        let callID = try #require(placed.body?["callId"] as? String)
        try phone.waitForCall(timeout: 20)
        try Self.waitForHangUp(of: phone, timeout: 30)
        let heard = try phone.receivedRecording().path
        phone.stop()
        let dice = try backend.waitFor("dice")
        #expect(dice.body["callid"] as? String == callID, "\(dice.body)")
        #expect(dice.body["result"] as? String == "ANSWERED" && dice.body["reason"] as? String == "MANAGERHANGUP", "\(dice.body)")
        #expect(!backend.received.contains { $0["event"] as? String == "ace" }, "the inline ace replaces the ACE callback")
        let speech = try Self.voicedRatio(of: heard)
        let expected = try Self.localSpeechSeconds(text, scratch: scratch)
        #expect(abs(speech.seconds - expected) <= max(0.6, expected * 0.25), "heard \(speech.seconds) s of speech, espeak-ng makes \(expected) s")
    }
}
