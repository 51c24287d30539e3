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

        /// Playout counters, in 20 ms frames unless named otherwise; every member is an
        /// integer from 0 to 2^53 - 1 and defaults to 0 when absent.
        public struct Playout: Sendable, Hashable {
            /// Frames played from received packets.
            public var framesPlayed: Int64
            /// Frames of concealment in a talk spurt (FEC, PLC or comfort noise).
            public var framesConcealed: Int64
            /// Concealed frames rebuilt from the next packet's in-band FEC.
            public var framesFECRecovered: Int64
            /// Concealed frames played as comfort noise once PLC had faded.
            public var framesComfortNoise: Int64
            /// Frames of silence between talk spurts or before the first packet.
            public var framesSilent: Int64
            /// Frames inserted to grow the jitter buffer's delay.
            public var framesStretched: Int64
            /// Packets dropped to shrink the jitter buffer's delay.
            public var framesShrunk: Int64
            /// Packets that arrived after their slot had played.
            public var packetsLate: Int64
            /// The jitter buffer's target delay when the leg closed, whole milliseconds.
            public var targetDelayMs: Int64

            public init(framesPlayed: Int64 = 0, framesConcealed: Int64 = 0, framesFECRecovered: Int64 = 0,
                        framesComfortNoise: Int64 = 0, framesSilent: Int64 = 0, framesStretched: Int64 = 0,
                        framesShrunk: Int64 = 0, packetsLate: Int64 = 0, targetDelayMs: Int64 = 0) {
                self.framesPlayed = framesPlayed
                self.framesConcealed = framesConcealed
                self.framesFECRecovered = framesFECRecovered
                self.framesComfortNoise = framesComfortNoise
                self.framesSilent = framesSilent
                self.framesStretched = framesStretched
                self.framesShrunk = framesShrunk
                self.packetsLate = packetsLate
                self.targetDelayMs = targetDelayMs
            }

            /// The largest integer JSON carries exactly (2^53 - 1).
            static let range: ClosedRange<Int64> = 0...9_007_199_254_740_991

            init(_ reader: FieldReader) throws(SignalingError) {
                func read(_ key: String) throws(SignalingError) -> Int64 { try reader.optionalInteger(key, in: Self.range) ?? 0 }
                framesPlayed = try read("framesPlayed")
                framesConcealed = try read("framesConcealed")
                framesFECRecovered = try read("framesFECRecovered")
                framesComfortNoise = try read("framesComfortNoise")
                framesSilent = try read("framesSilent")
                framesStretched = try read("framesStretched")
                framesShrunk = try read("framesShrunk")
                packetsLate = try read("packetsLate")
                targetDelayMs = try read("targetDelayMs")
            }

            var json: JSONValue {
                var object = JSONObject()
                object.append("framesPlayed", framesPlayed)
                object.append("framesConcealed", framesConcealed)
                object.append("framesFECRecovered", framesFECRecovered)
                object.append("framesComfortNoise", framesComfortNoise)
                object.append("framesSilent", framesSilent)
                object.append("framesStretched", framesStretched)
                object.append("framesShrunk", framesShrunk)
                object.append("packetsLate", packetsLate)
                object.append("targetDelayMs", targetDelayMs)
                return .object(object)
            }
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            requestID = try reader.requestIDField()
            callID = try reader.callIDField()
            playout = try Playout(try reader.object("playout"))
        }

        func append(to object: inout JSONObject) {
            object.append("id", requestID)
            object.append("callId", callID)
            object.append("playout", playout.json)
        }
    }
}
