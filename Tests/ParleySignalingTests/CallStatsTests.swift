import ParleySignaling
import Testing

/// `call.stats`: absent counters read as 0, unknown members are ignored, and a value that
/// is not a non-negative integer is a `bad_request` naming its field.
@Suite("call.stats")
struct CallStatsTests {
    static func frame(_ playout: String) -> String {
        #"{"v":1,"type":"call.stats","id":"16","callId":"\#(Samples.callID)","playout":\#(playout)}"#
    }

    static func error(_ text: String) -> SignalingError? {
        signalingError { () throws(SignalingError) in try SignalingCodec.decode(text) }
    }

    @Test("absent counters are 0 and unknown members are ignored")
    func lenientReading() throws {
        let message = try SignalingCodec.decode(Self.frame(#"{"framesConcealed":7,"futureCounter":3,"targetDelayMs":60}"#))
        guard case .callStats(let stats) = message else {
            Issue.record("not call.stats")
            return
        }
        #expect(stats.callID == Samples.callID && stats.requestID == "16")
        #expect(stats.playout == .init(framesConcealed: 7, targetDelayMilliseconds: 60))
    }

    @Test("malformed values are bad_request with the field's path")
    func malformedValues() throws {
        for (playout, field) in [
            (#"{"framesConcealed":-1}"#, "playout.framesConcealed"),
            (#"{"framesPlayed":1.5}"#, "playout.framesPlayed"),
            (#"{"packetsLate":"2"}"#, "playout.packetsLate"),
            (#"{"targetDelayMs":9007199254740992}"#, "playout.targetDelayMs"),
            (#"[1]"#, "playout"),
        ] {
            let error = try #require(Self.error(Self.frame(playout)), "\(playout)")
            #expect(error.code == .badRequest, "\(playout)")
            #expect(error.field == field, "\(playout)")
            #expect(error.requestID == "16")
        }
        let missing = try #require(Self.error(#"{"v":1,"type":"call.stats","id":"16","callId":"\#(Samples.callID)"}"#))
        #expect(missing.code == .badRequest && missing.field == "playout")
    }

    @Test("a server cannot send it")
    func direction() {
        #expect(SignalingMessageType.callStats.direction == .deviceToServer)
    }
}
