import Foundation
import ParleyPushTestSupport
import Testing

extension EndToEndRealTimeMediaTests {
    /// The real `parleyd` binary configured for push by its flags (docs/operations.md),
    /// against the provider emulator (scripts/push-emulator).
    @Suite(.serialized) struct PushTests {
        static let apnsToken = "5b1c5e2a7b3d4c6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f9012a3b4c5d6e7f"

        /// A parleyd sending pushes to `emulator` (its URLs and CA, two attempts 50 ms
        /// apart), its application set up for APNs with the emulator's key.
        static func pushServer(emulator: ProviderEmulator, ringTimeout: Int) throws -> ParleydInstance {
            let server = try ParleydInstance(flags: [
                "--apns-url", emulator.baseURL, "--apns-sandbox-url", emulator.baseURL, "--fcm-url", emulator.baseURL,
                "--push-ca-file", emulator.caFile, "--push-attempts", "2", "--push-retry-delay", "0.05", "--ring-timeout", String(ringTimeout),
            ])
            let p8 = server.dataDirectory.appendingPathComponent("apns.p8")
            try emulator.apns.privateKeyPEM.write(to: p8, atomically: true, encoding: .utf8)
            let setAPNs = try ManagedProcess(
                name: "parleyd app push set-apns", executable: BuiltProducts.parleyd,
                arguments: ["app", "push", "set-apns", server.applicationKey, "--team-id", emulator.apns.teamID,
                            "--key-id", emulator.apns.keyID, "--p8", p8.path, "--data-dir", server.dataDirectory.path])
            #expect(try setAPNs.waitForExit(timeout: 20) == 0, "\(setAPNs.report)")
            return server
        }

        /// Bob registers an APNs VoIP token over a raw WebSocket and logs out; Alice calls
        /// him; the emulator receives the VoIP push with a provider token it accepts.
        @Test func offlineCalleeWithATokenGetsThePush() throws {
            let emulator = try ProviderEmulator()
            let server = try EndToEndRealTimeMediaTests.PushTests.pushServer(emulator: emulator, ringTimeout: 3)

            let bob = try SilentSignalingDevice(
                port: server.port, applicationKey: server.applicationKey, token: server.mintToken(as: "bob"), deviceID: "bob-phone")
            try bob.request(
                #"{"v":1,"type":"push.register","id":"reg","pushType":"apnsVoip","token":"\#(Self.apnsToken)","environment":"sandbox","appId":"com.example.chat"}"#,
                until: "pushKey")
            try bob.logOut()

            let alice = try SoftphoneProcess.call("bob", on: server, as: "alice")
            let deadline = Date(timeIntervalSinceNow: 15)
            var pushes: [[String: Any]] = []
            while pushes.isEmpty, Date() < deadline {
                pushes = try emulator.requests().filter { $0["provider"] as? String == "apns" }
                if pushes.isEmpty { Thread.sleep(forTimeInterval: 0.05) }
            }
            let push = try #require(pushes.first, "no push reached the emulator; parleyd: \(server.process?.report ?? "")")
            #expect(push["status"] as? Int == 200)
            #expect(push["path"] as? String == "/3/device/" + Self.apnsToken)
            let headers = push["headers"] as? [String: String] ?? [:]
            #expect(headers["apns-push-type"] == "voip")
            #expect(headers["apns-topic"] == "com.example.chat.voip")
            #expect((push["jwtClaims"] as? [String: Any])?["iss"] as? String == emulator.apns.teamID)
            let body = try #require(push["body"] as? String)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
            #expect((object["parley"] as? String)?.split(separator: ".").count == 3, "a signed payload (JWS)")
            // Nobody relays, so the call ends as noAnswer once the ring timeout passes.
            #expect(try alice.waitForExit(timeout: 30) == 5, "noAnswer: \(alice.report)")
        }

        /// The wake-up path with the shipped tools: `parley listen --push-token` registers
        /// bob's VoIP token and keeps the push key in `--push-store`, then goes offline;
        /// alice calls; the emulator gets the push; `parley listen --relay-push` (as the app
        /// woken by it) reports and relays it, and the call is answered and established.
        @Test func theSoftphoneRegistersAPushTokenAndIsWokenByItsPush() throws {
            let emulator = try ProviderEmulator()
            let server = try EndToEndRealTimeMediaTests.PushTests.pushServer(emulator: emulator, ringTimeout: 20)
            let store = server.dataDirectory.appendingPathComponent("bob-push.json").path
            let payloadFile = server.dataDirectory.appendingPathComponent("push.json").path

            // Bob's phone registers its token, then the app is gone (Ctrl-C between calls).
            let registering = try SoftphoneProcess.listen("listen bob (register)", on: server, as: "bob", [
                "--device-id", "bob-phone", "--push-token", Self.apnsToken, "--push-environment", "sandbox",
                "--push-app-id", "com.example.chat", "--push-store", store,
            ])
            let registered = try registering.waitForEvent("pushRegistered", timeout: 15)
            #expect(registered["pushType"] as? String == "apnsVoip" && registered["already"] as? Bool == false)
            registering.process.interrupt()
            #expect(try registering.waitForExit(timeout: 15) == 0, "\(registering.report)")
            let kept = try #require(FileManager.default.contents(atPath: store), "the registration is kept in --push-store")
            let registration = try #require(try JSONSerialization.jsonObject(with: kept) as? [String: Any])
            #expect(registration["token"] as? String == Self.apnsToken && (registration["pushKey"] as? String)?.count == 43)

            let alice = try SoftphoneProcess.call("bob", on: server, as: "alice", ["--duration", "2"])
            let calling = try alice.waitForEvent("calling", timeout: 20)
            let deadline = Date(timeIntervalSinceNow: 15)
            var pushes: [[String: Any]] = []
            while pushes.isEmpty, Date() < deadline {
                pushes = try emulator.requests().filter { $0["provider"] as? String == "apns" }
                if pushes.isEmpty { Thread.sleep(forTimeInterval: 0.05) }
            }
            let push = try #require(pushes.first, "no push reached the emulator; parleyd: \(server.process?.report ?? "")")
            try #require(push["body"] as? String).write(toFile: payloadFile, atomically: true, encoding: .utf8)

            // The push wakes the app: a new listener on the same device and store relays it.
            let woken = try SoftphoneProcess.listen("listen bob (woken)", on: server, as: "bob", [
                "--device-id", "bob-phone", "--push-store", store, "--relay-push", payloadFile, "--answer",
            ])
            let relayed = try woken.waitForEvent("pushRelayed", timeout: 15)
            #expect(relayed["callId"] as? String == calling["callId"] as? String && relayed["from"] as? String == "alice")
            #expect(try alice.waitForExit(timeout: 40) == 0, "\(alice.report)")
            #expect(try woken.waitForExit(timeout: 15) == 0, "\(woken.report)")
            #expect(woken.eventNames.containsInOrder(["pushRelayed", "incoming", "answering", "established", "ended", "summary"]), "\(woken.eventNames)")
            #expect(try woken.waitForEvent("ended", timeout: 1)["cause"] as? String == "hungUp")
            #expect(alice.eventNames.containsInOrder(["calling", "ringing", "answered", "established", "ended"]), "\(alice.eventNames)")
        }
    }
}
