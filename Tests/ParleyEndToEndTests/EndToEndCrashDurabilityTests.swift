import Foundation
import Testing

/// docs/operations.md, "What happens at a crash": a call acknowledged to a device has a
/// committed record, so `kill -9` right after the acknowledgements loses none of them.
@Suite struct EndToEndCrashDurabilityTests {
    @Test func everyAcknowledgedCallOfABurstHasARecordAfterKillDashNine() throws {
        let server = try ParleydInstance(flags: ["--max-calls-per-user", "100"])
        let bob = try SilentSignalingDevice(port: server.port, applicationKey: server.applicationKey,
                                            token: try server.mintToken(as: "bob"), deviceID: "bob-phone")
        let callers = try (1...5).map { index in
            try SilentSignalingDevice(port: server.port, applicationKey: server.applicationKey,
                                      token: try server.mintToken(as: "caller\(index)"), deviceID: "caller\(index)-phone")
        }
        var callIDs: [String: String] = [:]  // request id -> call id, per caller below
        var bursts: [[String]] = []
        for index in callers.indices {
            var burst: [String] = []
            // 30 each: under the protocol's 32 requests in flight, which a burst that
            // waits for its records reaches (docs/protocol.md, Limits).
            for call in 0..<30 {
                let requestID = "c\(index)-\(call)"
                let callID = UUID().uuidString.lowercased()
                callIDs[requestID] = callID
                burst.append(#"{"v":1,"type":"call.start","id":"\#(requestID)","callId":"\#(callID)","to":{"kind":"user","address":"bob"},"sdp":"\#(Self.offer)"}"#)
            }
            bursts.append(burst)
        }
        for (caller, burst) in zip(callers, bursts) { try caller.sendBurst(burst) }
        var acknowledged: [String] = []
        for (index, caller) in callers.enumerated() {
            let ids = Set((0..<30).map { "c\(index)-\($0)" })
            let replies = try caller.readReplies(to: ids, timeout: 30)
            #expect(replies.count == 30, "caller \(index) got \(replies.count) of 30 replies")
            for (requestID, type) in replies where type == "result" {
                acknowledged.append(try #require(callIDs[requestID]))
            }
        }
        // The moment the last acknowledgement is in: no shutdown, no chance to write more.
        server.killHard()
        #expect(acknowledged.count == 150, "every call.start of the burst is acknowledged")
        _ = bob

        try server.start()
        var missing: [String] = []
        for callID in acknowledged {
            let (status, body) = try server.get("/v1/calls/\(callID)")
            if status != 200 { missing.append(callID) } else {
                #expect(body?["state"] as? String == "ended", "recovered as ended at the restart")
            }
        }
        #expect(missing.isEmpty, "\(missing.count) of \(acknowledged.count) acknowledged calls have no record after kill -9")
    }

    /// A WebRTC-shaped audio offer (docs/protocol.md's example), JSON-escaped.
    static let offer = [
        "v=0", "o=- 4611731400430051336 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0",
        "m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=mid:0", "a=ice-ufrag:Fr4n",
        "a=ice-pwd:Hk3jL9sPq2wXz8vB7nM1cD4e",
        "a=fingerprint:sha-256 26:3A:4D:BE:41:48:8F:B8:72:14:B0:03:23:39:DB:B9:F0:C8:DA:14:C1:6D:FC:F1:30:84:BF:3C:25:52:EC:A5",
        "a=setup:actpass", "a=sendrecv", "a=rtcp-mux", "a=rtpmap:111 opus/48000/2",
        "a=fmtp:111 minptime=10;useinbandfec=1", "a=candidate:1 1 udp 2122260223 127.0.0.1 51712 typ host",
    ].map { $0 + "\\r\\n" }.joined()
}
