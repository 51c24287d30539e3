import ParleyMediaLegCore

/// A libwebrtc-shaped statistics report of a leg's figures: the W3C types and member
/// names libwebrtc reports (webrtc-stats), in the units it uses (seconds, counts). Only
/// the members Parley's engine reads, and a few neighbours; not libwebrtc API.
enum MirrorStatistics {
    static func report(_ figures: MediaLegStatistics?) -> RTCStatisticsReport {
        let now = Date().timeIntervalSince1970 * 1e6
        guard let figures else { return RTCStatisticsReport(timestamp_us: now, statistics: [:]) }
        var statistics: [String: RTCStatistics] = [:]
        func add(_ id: String, _ type: String, _ values: [String: NSObject]) {
            statistics[id] = RTCStatistics(id: id, timestamp_us: now, type: type, values: values)
        }
        let samplesPerFrame = 960.0  // 20 ms at 48 kHz, as libwebrtc counts samples
        add("OT01A", "outbound-rtp", [
            "kind": "audio" as NSString, "mediaType": "audio" as NSString,
            "packetsSent": NSNumber(value: figures.rtp.packetsSent),
        ])
        add("IT01A", "inbound-rtp", [
            "kind": "audio" as NSString, "mediaType": "audio" as NSString,
            "packetsReceived": NSNumber(value: figures.rtp.packetsReceived),
            "packetsLost": NSNumber(value: figures.rtp.inboundCumulativeLost),
            "jitter": NSNumber(value: figures.rtp.inboundJitterMilliseconds / 1000),
            "totalSamplesReceived": NSNumber(value: Double(figures.framesPlayedFromPackets + figures.framesConcealed) * samplesPerFrame),
            "concealedSamples": NSNumber(value: Double(figures.framesConcealed) * samplesPerFrame),
            "jitterBufferTargetDelay": NSNumber(value: Double(figures.jitterBuffer.targetDelayNanoseconds) / 1e9),
        ])
        if let rtt = figures.rtp.roundTripTimeMilliseconds {
            add("RI01A", "remote-inbound-rtp", [
                "kind": "audio" as NSString, "roundTripTime": NSNumber(value: rtt / 1000),
            ])
        }
        if figures.selectedPair != nil {
            var pair: [String: NSObject] = ["state": "succeeded" as NSString, "nominated": NSNumber(value: true)]
            if let rtt = figures.rtp.roundTripTimeMilliseconds { pair["currentRoundTripTime"] = NSNumber(value: rtt / 1000) }
            add("CP01", "candidate-pair", pair)
        }
        return RTCStatisticsReport(timestamp_us: now, statistics: statistics)
    }
}
