import Foundation
import Testing

extension EndToEndRealTimeMediaTests {
    /// Whole calls through a real `parleyd` between real `parley` processes: event order,
    /// the end causes a person can produce, and the exit statuses scripts rely on.
    @Suite(.serialized) struct CallFlowTests {
        @Test func eventOrderOnBothSidesAndACallerHangUp() throws {
            let server = try ParleydInstance()
            let bob = try SoftphoneProcess.listen("listen bob", on: server, as: "bob", ["--answer"])
            let alice = try SoftphoneProcess.call("bob", on: server, as: "alice",
                                                  ["--duration", "2", "--header", "X-Order=1187", "--display-name", "Alice Ödman"])
            let aliceStatus = try alice.waitForExit(timeout: 40)
            let bobStatus = try bob.waitForExit(timeout: 15)
            #expect(aliceStatus == 0, "\(alice.report)")
            #expect(bobStatus == 0, "\(bob.report)")

            let callerEvents = alice.eventNames
            #expect(callerEvents.containsInOrder(["connecting", "signedIn", "calling", "progressing", "ringing", "answered", "established", "hangingUp", "ended", "summary"]),
                    "\(callerEvents)")
            for name in ["progressing", "ringing", "answered", "established", "ended"] {
                #expect(callerEvents.filter { $0 == name }.count == 1, "\(name) once: \(callerEvents)")
            }
            let calleeEvents = bob.eventNames
            #expect(calleeEvents.containsInOrder(["signedIn", "listening", "incoming", "answering", "established", "ended", "summary"]), "\(calleeEvents)")
            if let answered = calleeEvents.firstIndex(of: "answered") {
                #expect(answered > calleeEvents.firstIndex(of: "answering")! && answered < calleeEvents.firstIndex(of: "established")!)
            }
            let callerEnd = try alice.waitForEvent("ended", timeout: 1)
            let calleeEnd = try bob.waitForEvent("ended", timeout: 1)
            #expect(callerEnd["cause"] as? String == "hungUp")
            #expect(calleeEnd["cause"] as? String == "hungUp")
            let calling = try alice.waitForEvent("calling", timeout: 1)
            let incoming = try bob.waitForEvent("incoming", timeout: 1)
            #expect(calling["callId"] as? String == incoming["callId"] as? String, "both sides name the same call")
            #expect(incoming["from"] as? String == "alice")
            #expect(incoming["headers"] as? [String: String] == ["X-Order": "1187"], "call headers reach the callee")
            #expect(incoming["displayName"] as? String == "Alice Ödman", "the caller's display name reaches the callee")
            let summary = try alice.summary(timeout: 1)
            #expect(summary["established"] as? Bool == true)
            #expect((summary["durationSeconds"] as? Double ?? 0) >= 1.9)
        }

        @Test func calleeHangsUp() throws {
            let server = try ParleydInstance()
            let bob = try SoftphoneProcess.listen("listen bob", on: server, as: "bob", ["--answer", "--duration", "2"])
            let alice = try SoftphoneProcess.call("bob", on: server, as: "alice")
            #expect(try alice.waitForExit(timeout: 40) == 0, "\(alice.report)")
            #expect(try bob.waitForExit(timeout: 15) == 0, "\(bob.report)")
            #expect(try alice.waitForEvent("ended", timeout: 1)["cause"] as? String == "hungUp")
            #expect(bob.eventNames.contains("hangingUp"))
            #expect(!alice.eventNames.contains("hangingUp"), "the caller did not hang up itself")
        }

        @Test func ctrlCDuringTheCallHangsUpCleanly() throws {
            let server = try ParleydInstance()
            let bob = try SoftphoneProcess.listen("listen bob", on: server, as: "bob", ["--answer"])
            let alice = try SoftphoneProcess.call("bob", on: server, as: "alice")
            try alice.waitForEvent("established", timeout: 30)
            alice.process.interrupt()
            #expect(try alice.waitForExit(timeout: 20) == 0, "\(alice.report)")
            #expect(try alice.waitForEvent("hangingUp", timeout: 1)["reason"] as? String == "interrupted")
            #expect(try bob.waitForEvent("ended", timeout: 15)["cause"] as? String == "hungUp")
            #expect(try bob.waitForExit(timeout: 15) == 0, "\(bob.report)")
        }

        @Test func declinedCall() throws {
            let server = try ParleydInstance()
            let bob = try SoftphoneProcess.listen("listen bob", on: server, as: "bob", ["--decline"])
            let alice = try SoftphoneProcess.call("bob", on: server, as: "alice")
            #expect(try alice.waitForExit(timeout: 30) == 4, "denied: \(alice.report)")
            #expect(try bob.waitForExit(timeout: 15) == 0, "\(bob.report)")
            #expect(try alice.waitForEvent("ended", timeout: 1)["cause"] as? String == "denied")
            #expect(try bob.waitForEvent("ended", timeout: 1)["cause"] as? String == "denied")
            #expect(alice.process.errorText.contains("call ended: denied"))
        }

        @Test func callerCancelsBeforeTheAnswer() throws {
            let server = try ParleydInstance()
            // Interactive and nobody types: it rings until the caller gives up.
            let bob = try SoftphoneProcess.listen("listen bob", on: server, as: "bob", ["--count", "1"])
            let alice = try SoftphoneProcess.call("bob", on: server, as: "alice")
            try alice.waitForEvent("ringing", timeout: 30)
            try bob.waitForEvent("incoming", timeout: 10)
            alice.process.interrupt()
            #expect(try alice.waitForExit(timeout: 20) == 7, "canceled: \(alice.report)")
            #expect(try alice.waitForEvent("ended", timeout: 1)["cause"] as? String == "canceled")
            #expect(try bob.waitForEvent("ended", timeout: 15)["cause"] as? String == "canceled")
            #expect(try bob.waitForExit(timeout: 15) == 0, "\(bob.report)")
        }

        /// The SDK acknowledges every incoming call (`call.ack`), so a ringing device that
        /// nobody answers ends as `timeout`; `noAnswer` needs a device that never
        /// acknowledges (next case).
        @Test func ringTimeoutWithoutAnAnswer() throws {
            let server = try ParleydInstance(flags: ["--ring-timeout", "3"])
            let bob = try SoftphoneProcess.listen("listen bob", on: server, as: "bob", ["--count", "1"])
            let alice = try SoftphoneProcess.call("bob", on: server, as: "alice")
            let started = Date()
            #expect(try alice.waitForExit(timeout: 30) == 6, "timeout: \(alice.report)")
            #expect(Date().timeIntervalSince(started) < 20)
            #expect(try alice.waitForEvent("ended", timeout: 1)["cause"] as? String == "timeout")
            #expect(try bob.waitForEvent("ended", timeout: 15)["cause"] as? String == "timeout")
            #expect(try bob.waitForExit(timeout: 15) == 6, "a listener's unanswered call is a timeout too: \(bob.report)")
        }

        /// `noAnswer`: the callee's only device is connected but never acknowledges the
        /// call (a device only a raw WebSocket can play: every SDK device sends `call.ack`).
        @Test func noDeviceAcknowledgesSoTheCallEndsNoAnswer() throws {
            let server = try ParleydInstance(flags: ["--ring-timeout", "3"])
            let silent = try SilentSignalingDevice(
                port: server.port, applicationKey: server.applicationKey, token: server.mintToken(as: "bob"), deviceID: "silent-bob")
            let alice = try SoftphoneProcess.call("bob", on: server, as: "alice")
            #expect(try alice.waitForExit(timeout: 30) == 5, "noAnswer: \(alice.report)")
            #expect(try alice.waitForEvent("ended", timeout: 1)["cause"] as? String == "noAnswer")
            #expect(!alice.eventNames.contains("ringing"), "nobody acknowledged, so nothing rang")
            withExtendedLifetime(silent) {}
        }

        @Test func unknownUser() throws {
            let server = try ParleydInstance()
            let alice = try SoftphoneProcess.call("nobody", on: server, as: "alice")
            #expect(try alice.waitForExit(timeout: 30) == 3, "\(alice.report)")
            let ended = try alice.waitForEvent("ended", timeout: 1)
            #expect(ended["cause"] as? String == "error")
            #expect(ended["errorCode"] as? String == "destination_not_found")
            #expect(alice.process.errorText.contains("call ended: error: destination user not found"), "\(alice.report)")
        }

        @Test func threeDevicesOfOneUserOneAnswers() throws {
            let server = try ParleydInstance()
            let devices = try (1...3).map { number in
                try SoftphoneProcess.listen("listen bob#\(number)", on: server, as: "bob", ["--count", "1", "--device-id", "bob-device-\(number)"])
            }
            let alice = try SoftphoneProcess.call("bob", on: server, as: "alice", ["--duration", "2"])
            for device in devices { try device.waitForEvent("incoming", timeout: 30) }
            devices[1].process.write("\n")  // Enter answers
            #expect(try alice.waitForExit(timeout: 40) == 0, "\(alice.report)")
            #expect(try devices[1].waitForEvent("ended", timeout: 15)["cause"] as? String == "hungUp")
            for index in [0, 2] {
                #expect(try devices[index].waitForEvent("ended", timeout: 15)["cause"] as? String == "otherDeviceAnswered", "\(devices[index].report)")
                #expect(!devices[index].eventNames.contains("established"))
            }
            for device in devices { #expect(try device.waitForExit(timeout: 15) == 0, "\(device.report)") }
        }

        @Test func badFlagsAndBadTokensAndUnreachableServersAreOneLineWithStatus2() throws {
            let server = try ParleydInstance()
            let badSecret = try SoftphoneProcess("bad secret", [
                "call", "bob", "--server", server.serverURL, "--app", server.applicationKey,
                "--secret", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "--as", "alice",
            ])
            #expect(try badSecret.waitForExit(timeout: 30) == 2)
            #expect(badSecret.process.errorText.contains("cannot sign in"), "\(badSecret.report)")
            #expect(badSecret.process.errorText.split(separator: "\n").count == 1)

            let unreachable = try SoftphoneProcess("unreachable", [
                "call", "bob", "--server", "http://127.0.0.1:\(try ParleydInstance.freeLoopbackPort())",
                "--app", server.applicationKey, "--secret", server.secret, "--as", "alice",
            ])
            #expect(try unreachable.waitForExit(timeout: 30) == 2)
            #expect(unreachable.process.errorText.contains("cannot sign in"), "\(unreachable.report)")

            let badFlag = try SoftphoneProcess("bad flag", ["call", "bob", "--frobnicate"])
            #expect(try badFlag.waitForExit(timeout: 10) == 2)
            #expect(badFlag.process.errorText == "parley call: unknown option '--frobnicate' for parley call\n")
        }
    }
}
