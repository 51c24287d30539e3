import Foundation
import ParleyAuth
import ParleyCallCore
import ParleyServer
import ParleySignaling
import ParleyStore
import Testing

/// One tenant cannot take what the others need (docs/operations.md, "Limits"): calls per
/// user, and media legs (ports) per application.
@Suite struct ServerLimitTests {
    @Test func oneApplicationFillingItsLegQuotaLeavesPortsForAnother() throws {
        let harness = try ServerHarness {
            $0.maxMediaLegsPerApplication = 4
            $0.maxCallsPerUser = 10
        }
        let credentials = try ApplicationCredentials.generate()
        let other = try harness.query { (store) throws(StoreError) in
            try store.createApplication(key: credentials.key, name: "other", secret: credentials.secret.base64, at: 1)
        }
        let alice = try harness.device("alice")
        let bob = try harness.device("bob")
        // Two calls ringing: each holds the caller's leg and bob's device leg.
        for _ in 0..<2 {
            let callID = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
            try alice.expect(.callMedia)
            try alice.expect(.callProgress)
            #expect(try bob.expect(.callIncoming).callID == callID)
        }
        #expect(harness.server.mediaLegCount == 4)
        // The third call of the same application finds its quota full: media_failed.
        let third = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
        let ended = try alice.expectEnded(third)
        #expect(ended.cause == "error")
        #expect(ended.code == "media_failed")
        #expect(harness.server.mediaLegCount == 4)

        // Another application's users still get legs.
        let erin = try TestDevice(address: harness.address)
        let frank = try TestDevice(address: harness.address)
        for (device, user) in [(erin, "erin"), (frank, "frank")] {
            let token = try harness.token(for: user, secret: other.secret, applicationKey: other.key)
            guard case .helloOK = try device.hello(appKey: other.key, token: token, deviceID: "\(user)-phone") else {
                throw TestFailure("hello refused")
            }
        }
        let callID = try erin.startCall(to: "frank", sdp: try SDPPeer.offer())
        try erin.expect(.callMedia)
        try erin.expect(.callProgress)
        #expect(try frank.expect(.callIncoming).callID == callID)
        #expect(harness.server.mediaLegCount == 6)
    }

    @Test func aUserBeyondMaxCallsPerUserIsRefusedWithTooManyCalls() throws {
        let harness = try ServerHarness { $0.maxCallsPerUser = 1 }
        let alice = try harness.device("alice")
        let bob = try harness.device("bob")
        _ = try alice.startCall(to: "bob", sdp: try SDPPeer.offer())
        try alice.expect(.callMedia)
        try alice.expect(.callProgress)
        try bob.expect(.callIncoming)
        let id = alice.requestID()
        try alice.send(.callStart(.init(requestID: id, callID: newCallID(), to: .user("bob"), headers: [:], sdp: try SDPPeer.offer())))
        guard case .error(let error) = try alice.expect(.error) else { throw TestFailure("not an error") }
        #expect(error.replyTo == id)
        #expect(error.code == .tooManyCalls)
    }
}
