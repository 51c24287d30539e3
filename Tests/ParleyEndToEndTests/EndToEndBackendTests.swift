import Foundation
import Testing

extension EndToEndRealTimeMediaTests.SIPInteropBaresipTests {
    /// A test backend (scripts/test-backend/backend.py: it checks Sinch's signature on
    /// every callback, independently of Parley's code, and answers from a script).
    final class TestBackend: @unchecked Sendable {
        let process: ManagedProcess
        let port: UInt16
        let script: URL
        let log: URL

        init(directory: URL, applicationKey: String, secret: String, script: [String: Any]) throws {
            self.script = directory.appendingPathComponent("script.json")
            log = directory.appendingPathComponent("backend.log")
            try JSONSerialization.data(withJSONObject: script).write(to: self.script)
            let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("scripts/test-backend/backend.py").path
            process = try ManagedProcess(name: "backend", executable: URL(fileURLWithPath: "/usr/bin/python3"), arguments: [
                path, "--app-key", applicationKey, "--secret", secret, "--script", self.script.path, "--log", log.path,
            ])
            let line = try process.waitForLine(timeout: 10, "'listening'") { $0.hasPrefix("listening ") }
            port = try #require(UInt16(line.dropFirst("listening ".count)))
        }

        deinit { process.killHard() }

        /// The callbacks received so far, oldest first.
        var received: [[String: Any]] {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }

        /// Waits up to 10 s for a callback of `event`; its body as an object.
        func waitFor(_ event: String) throws -> (verified: Bool, body: [String: Any]) {
            let deadline = Date(timeIntervalSinceNow: 10)
            while Date() < deadline {
                if let entry = received.first(where: { $0["event"] as? String == event }) {
                    let body = (entry["body"] as? String).flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] } ?? [:]
                    #expect(entry["verified"] as? Bool == true, "\(entry)")
                    return (entry["verified"] as? Bool == true, body)
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
            throw ManagedProcess.Failure(description: "no \(event) reached the backend: \(received)")
        }
    }

    /// A parleyd whose trunk is `phone`, with `number` routed by the application's backend
    /// at `backend` (set before the start, so the first call finds it).
    static func backendGateway(phone: BaresipPeer, number: String, backend: (String, String) throws -> TestBackend) throws
        -> (ParleydInstance, TestBackend) {
        let server = try ParleydInstance(flags: ["--sip-listen", "127.0.0.1:0", "--sip-trunk", "sip:\(phone.address);transport=udp"]) { key in
            ["--sip-number", "\(number)=\(key)"]
        }
        let test = try backend(server.applicationKey, server.secret)
        try server.admin(["callback", "set", server.applicationKey, "http://127.0.0.1:\(test.port)/sinch/callback", "--timeout-ms", "3000"])
        // Read at the start: restarted so the first call finds the backend.
        server.process?.killHard()
        try server.start()
        return (server, test)
    }

    /// A phone calls a number its application's backend routes: the backend gets a signed
    /// ICE naming the caller and the number, answers `connectMxp` to bob, whose softphone
    /// rings and answers; the tones cross both ways; bob hangs up; the backend gets a
    /// signed DiCE: ANSWERED, CALLEEHANGUP, with the duration.
    @Test func aPhoneCallRoutedByTheBackendRingsTheUserItNames() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let recording = scratch.appendingPathComponent("bob-hears.wav").path
        let phone = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, backend) = try Self.backendGateway(phone: phone, number: "+46700000097") { key, secret in
            try TestBackend(directory: scratch, applicationKey: key, secret: secret, script: [
                "ice": ["action": ["name": "connectMxp", "destination": ["type": "username", "endpoint": "bob"]]],
            ])
        }
        let sipPort = try Self.sipPort(of: server)
        let bob = try SoftphoneProcess.listen("listen bob", on: server, as: "bob",
                                              ["--answer", "--tone", "440", "--record", recording, "--duration", "4"])
        try phone.command("dial", "sip:+46700000097@127.0.0.1:\(sipPort)")
        let ice = try backend.waitFor("ice")
        #expect(ice.body["cli"] as? String == "+4615550101", "\(ice.body)")
        #expect((ice.body["to"] as? [String: Any])?["endpoint"] as? String == "+46700000097", "\(ice.body)")
        #expect(ice.body["applicationKey"] as? String == server.applicationKey && ice.body["originationType"] as? String == "pstn")
        let callID = try #require(ice.body["callid"] as? String)
        let incoming = try bob.waitForEvent("incoming", timeout: 20)
        #expect(incoming["callId"] as? String == callID && incoming["from"] as? String == "+4615550101", "\(incoming)")
        try phone.waitForCall(timeout: 20)
        #expect(try bob.waitForExit(timeout: 30) == 0, "\(bob.report)")
        try phone.waitForCallEnd(timeout: 10)
        let phoneHeard = try phone.receivedRecording().path
        phone.stop()
        let dice = try backend.waitFor("dice")
        #expect(dice.body["callid"] as? String == callID)
        #expect(dice.body["result"] as? String == "ANSWERED" && dice.body["reason"] as? String == "CALLEEHANGUP", "\(dice.body)")
        #expect((dice.body["duration"] as? Int ?? 0) >= 3, "\(dice.body)")
        try Self.expectTone(1000, in: recording, minimumRatio: 0.75)
        try Self.expectTone(440, in: phoneHeard, minimumRatio: 0.75)
    }

    /// A backend that answers `hangup`, and one that answers garbage: the phone's call is
    /// refused (480) and the DiCE says why (MANAGERHANGUP, CALLBACKERROR).
    @Test func aBackendThatHangsUpOrAnswersGarbageRefusesTheCall() throws {
        for (answer, reason) in [(["action": ["name": "hangup"]] as Any, "MANAGERHANGUP"), ("not json" as Any, "CALLBACKERROR")] {
            let scratch = try Self.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: scratch) }
            let phone = try BaresipPeer(user: "+4615550101", tone: 1000)
            let (server, backend) = try Self.backendGateway(phone: phone, number: "+46700000097") { key, secret in
                try TestBackend(directory: scratch, applicationKey: key, secret: secret, script: ["ice": answer])
            }
            let sipPort = try Self.sipPort(of: server)
            try phone.command("dial", "sip:+46700000097@127.0.0.1:\(sipPort)")
            try phone.process.waitForLine(timeout: 10, "'480 Temporarily Unavailable'") { $0.contains("480 Temporarily Unavailable") }
            let dice = try backend.waitFor("dice")
            #expect(dice.body["result"] as? String == "FAILED" && dice.body["reason"] as? String == reason, "\(dice.body)")
            phone.stop()
        }
    }
}
