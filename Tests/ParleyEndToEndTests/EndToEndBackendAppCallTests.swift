import Foundation
import Testing

extension EndToEndRealTimeMediaTests.SIPInteropBaresipTests {
    /// A parleyd whose trunk is `phone`, whose application may dial `+46` numbers (CLI
    /// `+46700000001`) and whose backend at `backend` routes its users' calls (`--app-calls`).
    static func appCallGateway(phone: BaresipPeer, backend: (String, String) throws -> TestBackend) throws -> (ParleydInstance, TestBackend) {
        let server = try ParleydInstance(flags: ["--sip-listen", "127.0.0.1:0", "--sip-trunk", "sip:\(phone.address);transport=udp"])
        let test = try backend(server.applicationKey, server.secret)
        try server.admin(["set-dialling", server.applicationKey, "--sip", "on", "--allow-prefix", "+46"])
        try server.admin(["set-cli", server.applicationKey, "+46700000001"])
        try server.admin(["callback", "set", server.applicationKey, "http://127.0.0.1:\(test.port)/sinch/callback", "--app-calls"])
        server.process?.killHard()
        try server.start()
        return (server, test)
    }

    /// `callPhoneNumber` routed by the backend: alice dials +4600000000; the backend's ICE
    /// names her (`user`) and the number (`to`), and it answers `connectPstn` to
    /// +4615550101, which the trunk's phone (baresip) answers; tones cross both ways.
    @Test func anAppCallToANumberIsRoutedWhereTheBackendSays() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let recording = scratch.appendingPathComponent("alice-hears.wav").path
        let phone = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, backend) = try Self.appCallGateway(phone: phone) { key, secret in
            try TestBackend(directory: scratch, applicationKey: key, secret: secret, script: [
                "ice": ["action": ["name": "connectPstn", "number": "+4615550101", "cli": "+46700000002"]],
            ])
        }
        let alice = try SoftphoneProcess.call("+4600000000", on: server, as: "alice",
                                              ["--duration", "4", "--tone", "440", "--record", recording])
        let ice = try backend.waitFor("ice")
        #expect(ice.body["user"] as? String == "alice", "\(ice.body)")
        #expect((ice.body["to"] as? [String: Any])?["type"] as? String == "number", "\(ice.body)")
        #expect((ice.body["to"] as? [String: Any])?["endpoint"] as? String == "+4600000000", "\(ice.body)")
        try alice.waitForEvent("established", timeout: 30)
        try phone.waitForCall(timeout: 10)
        #expect(try alice.waitForExit(timeout: 30) == 0, "\(alice.report)")
        try phone.waitForCallEnd(timeout: 10)
        let phoneHeard = try phone.receivedRecording().path
        phone.stop()
        let dice = try backend.waitFor("dice")
        #expect(dice.body["result"] as? String == "ANSWERED" && dice.body["reason"] as? String == "CALLERHANGUP", "\(dice.body)")
        try Self.expectTone(1000, in: recording, minimumRatio: 0.75)
        try Self.expectTone(440, in: phoneHeard, minimumRatio: 0.75)
    }

    /// `callUser` routed by the backend, which answers `hangup`: the call ends at once with
    /// `error` `destination_unavailable`, bob's device never rings, and the DiCE says
    /// MANAGERHANGUP.
    @Test func anAppCallToAUserTheBackendHangsUpEndsAtOnce() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let phone = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, backend) = try Self.appCallGateway(phone: phone) { key, secret in
            try TestBackend(directory: scratch, applicationKey: key, secret: secret, script: ["ice": ["action": ["name": "hangup"]]])
        }
        let bob = try SoftphoneProcess.listen("listen bob", on: server, as: "bob", ["--answer"])
        let alice = try SoftphoneProcess.call("bob", on: server, as: "alice")
        #expect(try alice.waitForExit(timeout: 30) != 0, "\(alice.report)")
        let ended = try alice.waitForEvent("ended", timeout: 1)
        #expect(ended["cause"] as? String == "error" && ended["errorCode"] as? String == "destination_unavailable", "\(ended)")
        let dice = try backend.waitFor("dice")
        #expect(dice.body["result"] as? String == "FAILED" && dice.body["reason"] as? String == "MANAGERHANGUP", "\(dice.body)")
        #expect(!bob.eventNames.contains("incoming"), "\(bob.eventNames)")
        phone.stop()
    }
}
