public import ParleyCallModel
import ParleyWireCore
extension SignalingMessage {
    /// `call.stats` (device to server): what the device's playout did with the audio it
    /// received on a call, sent when its media leg closes, so the server keeps it on that
    /// leg of the call record. Answered by `result`.
    public struct CallStats: Sendable, Hashable {
        /// Request id, echoed as `re` in the reply.
        public var requestID: String
        /// The call's id.
        public var callID: String
        /// The device's playout counters.
        public var playout: Playout

        public init(requestID: String, callID: String, playout: Playout) {
            self.requestID = requestID
            self.callID = callID
            self.playout = playout
        }

        /// Playout counters (`PlayoutCounters`); on the wire every member is an integer
        /// from 0 to 2^53 - 1 that defaults to 0 when absent, the target delay named
        /// `targetDelayMs`.
        public typealias Playout = PlayoutCounters

        init(_ reader: FieldReader) throws(SignalingError) {
            requestID = try reader.requestIDField()
            callID = try reader.callIDField()
            playout = try Self.readPlayout(try reader.object("playout"))
        }

        func append(to object: inout JSONObject) {
            object.append("id", requestID)
            object.append("callId", callID)
            object.append("playout", Self.json(playout))
        }

        /// The largest integer JSON carries exactly (2^53 - 1).
        static let counterRange: ClosedRange<Int64> = 0...9_007_199_254_740_991

        static func readPlayout(_ reader: FieldReader) throws(SignalingError) -> Playout {
            func read(_ key: String) throws(SignalingError) -> Int64 { try reader.optionalInteger(key, in: counterRange) ?? 0 }
            return Playout(
                framesPlayed: try read("framesPlayed"), framesConcealed: try read("framesConcealed"),
                framesFECRecovered: try read("framesFECRecovered"), framesComfortNoise: try read("framesComfortNoise"),
                framesSilent: try read("framesSilent"), framesStretched: try read("framesStretched"),
                framesShrunk: try read("framesShrunk"), packetsLate: try read("packetsLate"),
                targetDelayMilliseconds: try read("targetDelayMs"))
        }

        static func json(_ playout: Playout) -> JSONValue {
            var object = JSONObject()
            object.append("framesPlayed", playout.framesPlayed)
            object.append("framesConcealed", playout.framesConcealed)
            object.append("framesFECRecovered", playout.framesFECRecovered)
            object.append("framesComfortNoise", playout.framesComfortNoise)
            object.append("framesSilent", playout.framesSilent)
            object.append("framesStretched", playout.framesStretched)
            object.append("framesShrunk", playout.framesShrunk)
            object.append("packetsLate", playout.packetsLate)
            object.append("targetDelayMs", playout.targetDelayMilliseconds)
            return .object(object)
        }
    }
}
