import ParleyMediaCore
import ParleyRTP

/// Jitter buffer and RTCP bookkeeping per media packet, one stream.
func jitterBenchmarks() -> [Benchmark] {
    let payload = ArraySlice((0..<80).map { UInt8(truncatingIfNeeded: $0 &* 37) })
    let frame: UInt64 = 20_000_000

    // In order, constant delay: push one, pop one.
    var steady = JitterBuffer()
    var steadyIndex: UInt64 = 0

    // Jittery and reordered: arrival offsets from a fixed pattern (0-60 ms), so that
    // packets overtake each other and the buffer sits at ~60 ms.
    let offsets: [UInt64] = (0..<64).map { UInt64(($0 &* 7919) % 61) * 1_000_000 }
    var jittery = JitterBuffer()
    var jitteryIndex: UInt64 = 0

    var receiver = ReceiveStatistics(ssrc: 1, clockRate: 48_000)
    var receiverIndex: UInt64 = 0

    var reporter = RTCPReporter(configuration: .init(ssrc: 2, cname: "bench@parley", clockRate: 48_000,
                                                     clock: MediaClock(unixNanosecondsAtZero: 1_800_000_000_000_000_000)))
    for k in 0..<100 {
        reporter.recordReceived(ssrc: 1, sequenceNumber: UInt16(k), timestamp: UInt32(k * 960), payloadBytes: 80, now: UInt64(k) * frame)
        reporter.recordSent(timestamp: UInt32(k * 960), payloadBytes: 80, now: UInt64(k) * frame)
    }
    var reportTime: UInt64 = 100 * frame

    return [
        Benchmark(format: "jitter", operation: "push + pop, in order", messageBytes: payload.count) {
            let now = steadyIndex * frame
            steady.push(payload: payload, sequenceNumber: UInt16(truncatingIfNeeded: steadyIndex),
                        timestamp: UInt32(truncatingIfNeeded: steadyIndex &* 960), ssrc: 1, now: now + 5_000_000)
            if case .packet(let played) = steady.pop(now: now + 30_000_000) { benchmarkSink &+= played.samples }
            steadyIndex &+= 1
        },
        Benchmark(format: "jitter", operation: "push + pop, 0-60 ms jitter, reordering", messageBytes: payload.count) {
            let k = jitteryIndex
            let now = k * frame
            jittery.push(payload: payload, sequenceNumber: UInt16(truncatingIfNeeded: k), timestamp: UInt32(truncatingIfNeeded: k &* 960),
                         ssrc: 1, now: now + offsets[Int(k % 64)])
            switch jittery.pop(now: now + 7_000_000) {
            case .packet(let played): benchmarkSink &+= played.samples
            case .lost(let loss): benchmarkSink &+= loss.samples
            default: benchmarkSink &+= 1
            }
            jitteryIndex &+= 1
        },
        Benchmark(format: "jitter", operation: "receive statistics (A.1 + A.8) per packet", messageBytes: payload.count) {
            let k = receiverIndex
            receiver.record(sequenceNumber: UInt16(truncatingIfNeeded: k), timestamp: UInt32(truncatingIfNeeded: k &* 960),
                            payloadBytes: 80, now: k * frame + 3_000_000)
            benchmarkSink &+= Int(receiver.jitterEstimator.jitter)
            receiverIndex &+= 1
        },
        Benchmark(format: "jitter", operation: "RTCP report: build SR+SDES and serialize", messageBytes: 0) {
            reportTime &+= frame
            reporter.recordSent(timestamp: UInt32(truncatingIfNeeded: reportTime / 20_833), payloadBytes: 80, now: reportTime)
            let compound = reporter.makeReport(now: reportTime)
            benchmarkSink &+= (try? compound.serialized().count) ?? 0
        },
    ]
}
