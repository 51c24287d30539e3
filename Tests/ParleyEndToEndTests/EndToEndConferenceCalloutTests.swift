import Foundation
import ParleyPushTestSupport
import Testing

extension EndToEndRealTimeMediaTests.ConferenceRoomTests {
    /// A conference callout through the REST API (docs/conference.md, "Callouts"): bob is
    /// offline with a push token; the callout pushes him (the room is the caller); the app
    /// woken by the push relays it and answers; bob is then in the room with p0, and each
    /// hears the other's tone. The room lists him by user id, and a kick ends his call.
    @Test func aConferenceCalloutPushesAnOfflineUserAndJoinsThemOnAnswer() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-e2e-callout-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let emulator = try ProviderEmulator()
        let server = try EndToEndRealTimeMediaTests.PushTests.pushServer(emulator: emulator, ringTimeout: 20)
        let store = directory.appendingPathComponent("bob-push.json").path
        let registering = try SoftphoneProcess.listen("listen bob (register)", on: server, as: "bob", [
            "--device-id", "bob-phone", "--push-token", EndToEndRealTimeMediaTests.PushTests.apnsToken, "--push-environment", "sandbox",
            "--push-app-id", "com.example.chat", "--push-store", store,
        ])
        _ = try registering.waitForEvent("pushRegistered", timeout: 15)
        registering.process.interrupt()
        #expect(try registering.waitForExit(timeout: 15) == 0, "\(registering.report)")

        let host = try SoftphoneProcess("conference p0", ["conference", "standup"] + server.clientFlags(as: "p0")
            + ["--tone", "350", "--record", directory.appendingPathComponent("p0.wav").path, "--duration", "60"])
        let hostCall = try #require(try host.waitForEvent("established", timeout: 20)["callId"] as? String)

        let callouts = "/calling/v1/callouts"
        let placed = try server.request("POST", callouts, body: [
            "method": "conferenceCallout",
            "conferenceCallout": ["conferenceId": "standup", "destination": ["type": "username", "endpoint": "bob"], "cli": "Standup"],
        ])
        #expect(placed.status == 200, "\(placed)")
        let callID = try #require(placed.body?["callId"] as? String)

        let deadline = Date(timeIntervalSinceNow: 15)
        var pushes: [[String: Any]] = []
        while pushes.isEmpty, Date() < deadline {
            pushes = try emulator.requests().filter { $0["provider"] as? String == "apns" }
            if pushes.isEmpty { Thread.sleep(forTimeInterval: 0.05) }
        }
        let push = try #require(pushes.first, "no push reached the emulator; parleyd: \(server.process?.report ?? "")")
        let payloadFile = directory.appendingPathComponent("push.json").path
        try #require(push["body"] as? String).write(toFile: payloadFile, atomically: true, encoding: .utf8)
        let bob = try SoftphoneProcess.listen("listen bob (woken)", on: server, as: "bob", [
            "--device-id", "bob-phone", "--push-store", store, "--relay-push", payloadFile, "--answer",
            "--tone", "650", "--record", directory.appendingPathComponent("bob.wav").path, "--duration", "60",
        ])
        let relayed = try bob.waitForEvent("pushRelayed", timeout: 15)
        #expect(relayed["callId"] as? String == callID && relayed["from"] as? String == "standup", "\(relayed)")
        #expect(try bob.waitForEvent("established", timeout: 20)["callId"] as? String == callID)

        let listed = try server.request("GET", "/calling/v1/conferences/id/standup")
        let entries = try #require(listed.body?["participants"] as? [[String: Any]], "\(listed)")
        #expect(Set(entries.compactMap { $0["id"] as? String }) == [hostCall, callID])
        #expect(Set(entries.compactMap { $0["cli"] as? String }) == ["p0", "bob"])

        let clock = ContinuousClock()
        let together = clock.now
        Thread.sleep(forTimeInterval: 3)
        let kicked = clock.now
        #expect(try server.request("DELETE", "/calling/v1/conferences/id/standup/\(callID)").status == 204)
        #expect(try bob.waitForExit(timeout: 20) == 0, "\(bob.report)")
        #expect(bob.events.contains { $0["event"] as? String == "ended" && $0["cause"] as? String == "hungUp" }, "\(bob.eventNames)")
        let hostLeft = clock.now
        host.process.interrupt()
        #expect(try host.waitForExit(timeout: 20) == 0, "\(host.report)")

        // While both were in the room (0.5 s after bob was established until 0.2 s before
        // the kick), counted back from each recording's end: bob's ends at the kick, p0's
        // when it left.
        let seconds = { (from: ContinuousClock.Instant, to: ContinuousClock.Instant) in
            Double(from.duration(to: to).components.seconds) + Double(from.duration(to: to).components.attoseconds) / 1e18
        }
        let length = seconds(together, kicked) - 0.7
        let bobHeard = try ToneLevels(path: directory.appendingPathComponent("bob.wav").path, frequencies: [350, 650])
            .window(endingSecondsBeforeEnd: 0.3, seconds: length)
        #expect(bobHeard.share(of: 350, above: -40) > 0.9, "bob hears p0's 350 Hz")
        #expect(bobHeard.share(of: 650, above: -40) < 0.05, "bob does not hear his own 650 Hz")
        let hostHeard = try ToneLevels(path: directory.appendingPathComponent("p0.wav").path, frequencies: [350, 650])
            .window(endingSecondsBeforeEnd: seconds(kicked, hostLeft) + 0.3, seconds: length)
        #expect(hostHeard.share(of: 650, above: -40) > 0.9, "p0 hears bob's 650 Hz")
        #expect(hostHeard.share(of: 350, above: -40) < 0.05, "p0 does not hear its own 350 Hz")

        let record = try server.request("GET", "/v1/calls/\(callID)")
        #expect(record.body?["direction"] as? String == "conferenceToApp", "\(record)")
        #expect(record.body?["caller"] as? String == "standup" && record.body?["callee"] as? String == "bob", "\(record)")
        #expect(record.body?["endCause"] as? String == "hungUp")
    }

    /// Callouts refused before anything is placed: an unknown user, a bad room id, a
    /// destination this server does not call out to, a malformed body.
    @Test func badCalloutsAreRefusedInTheSinchShape() throws {
        let server = try ParleydInstance()
        func post(_ body: [String: Any]) throws -> (Int, Int?) {
            let response = try server.request("POST", "/calling/v1/callouts", body: body)
            return (response.status, response.body?["errorCode"] as? Int)
        }
        let unknown = try post(["method": "conferenceCallout", "conferenceCallout": ["conferenceId": "r", "destination": ["type": "username", "endpoint": "nobody"]]])
        #expect(unknown.0 == 404 && unknown.1 == 40400)
        let longRoom = String(repeating: "r", count: 65)
        let badRoom = try post(["method": "conferenceCallout", "conferenceCallout": ["conferenceId": longRoom, "destination": ["type": "username", "endpoint": "bob"]]])
        #expect(badRoom.0 == 400 && badRoom.1 == 40000)
        let tts = try post(["method": "ttsCallout", "ttsCallout": ["text": "hello", "destination": ["type": "username", "endpoint": "bob"]]])
        #expect(tts.0 == 501 && tts.1 == 50100, "a ttsCallout to an app user is not built")
        let noDestination = try post(["method": "ttsCallout", "ttsCallout": ["text": "hello"]])
        #expect(noDestination.0 == 400 && noDestination.1 == 40000)
        let phone = try post(["method": "conferenceCallout", "conferenceCallout": ["conferenceId": "r", "destination": ["type": "number", "endpoint": "+15551234567"]]])
        #expect(phone.0 == 501 && phone.1 == 50100)
        let noMethod = try post(["conferenceCallout": [:] as [String: Any]])
        #expect(noMethod.0 == 400 && noMethod.1 == 40000)
        let get = try server.request("GET", "/calling/v1/callouts")
        #expect(get.status == 405)
    }
}
