import ParleyMediaCore

/// A manual-clock simulation of one audio stream through a network into a jitter
/// buffer: the sender emits packet k at `k * packetInterval`, the network delays (or
/// drops, or duplicates) it, the receiver pushes it on arrival and pops once per tick.
struct JitterBufferSimulation {
    struct Sent {
        var index: Int
        var sequenceNumber: UInt16
        var timestamp: UInt32
        var arrival: UInt64
    }

    static let millisecond: UInt64 = 1_000_000

    var configuration = JitterBuffer.Configuration()
    var ssrc: UInt32 = 0x1234_5678
    var firstSequenceNumber: UInt16 = 1000
    var firstTimestamp: UInt32 = 0x0001_0000
    var packetInterval: UInt64 = 20 * millisecond
    var samplesPerPacket: UInt32 = 960
    /// Sender clock starts here, so arrival times are never before zero.
    var start: UInt64 = 1_000 * millisecond
    /// Offset of the playout ticks relative to the sender's clock.
    var tickPhase: UInt64 = 7 * millisecond
    /// How late tick k wakes up after its nominal time (a timer never fires early).
    var wakeUpLateness: (Int) -> UInt64 = { _ in 0 }

    /// One entry per delivered copy, in no particular order.
    var deliveries: [Sent] = []

    /// Sends `count` packets; `delay(k)` gives the one-way delay of packet k in
    /// nanoseconds, or nil to drop it.
    mutating func send(count: Int, delay: (Int) -> UInt64?) {
        for k in 0..<count {
            guard let d = delay(k) else { continue }
            deliver(index: k, delay: d)
        }
    }

    /// Adds one more delivered copy of packet `index`.
    mutating func deliver(index k: Int, delay: UInt64) {
        deliveries.append(Sent(
            index: k,
            sequenceNumber: firstSequenceNumber &+ UInt16(truncatingIfNeeded: k),
            timestamp: firstTimestamp &+ UInt32(truncatingIfNeeded: k) &* samplesPerPacket,
            arrival: start + UInt64(k) * packetInterval + delay))
    }

    struct Result {
        var outputs: [JitterBuffer.Playout] = []
        var buffer: JitterBuffer
        var maximumBuffered = 0
        var maximumTarget: Int64 = 0
        var pushOutcomes: [JitterBuffer.PushOutcome] = []

        /// Payload indices of the packets played, in playout order.
        var playedIndices: [Int] {
            outputs.compactMap { output in
                guard case .packet(let frame) = output else { return nil }
                return JitterBufferSimulation.index(of: frame.payload)
            }
        }

        /// Sequence numbers reported lost, in playout order.
        var lostSequenceNumbers: [UInt16] {
            outputs.compactMap { output in
                guard case .lost(let loss) = output else { return nil }
                return loss.expectedSequenceNumber
            }
        }

        var losses: [JitterBuffer.Loss] {
            outputs.compactMap { output in
                guard case .lost(let loss) = output else { return nil }
                return loss
            }
        }
    }

    static func payload(index: Int) -> ArraySlice<UInt8> {
        let v = UInt32(truncatingIfNeeded: index)
        return [UInt8(v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)][...]
    }

    static func index(of payload: ArraySlice<UInt8>) -> Int {
        payload.reduce(0) { $0 << 8 | Int($1) }
    }

    /// Runs arrivals and ticks in time order (arrivals first on a tie) until `ticks`
    /// ticks have played.
    func run(ticks: Int) -> Result {
        var buffer = JitterBuffer(configuration: configuration)
        var result = Result(buffer: buffer)
        let arrivals = deliveries.enumerated().sorted { ($0.element.arrival, $0.offset) < ($1.element.arrival, $1.offset) }.map(\.element)
        var next = 0
        let tickInterval = UInt64(configuration.frameDuration.components.attoseconds / 1_000_000_000)
            + UInt64(configuration.frameDuration.components.seconds) * 1_000_000_000
        for tick in 0..<ticks {
            let now = start + tickPhase + UInt64(tick) * tickInterval + wakeUpLateness(tick)
            while next < arrivals.count, arrivals[next].arrival <= now {
                let sent = arrivals[next]
                result.pushOutcomes.append(buffer.push(
                    payload: Self.payload(index: sent.index), sequenceNumber: sent.sequenceNumber,
                    timestamp: sent.timestamp, ssrc: ssrc, now: sent.arrival))
                result.maximumBuffered = max(result.maximumBuffered, buffer.statistics.bufferedPackets)
                next += 1
            }
            var pops = 0
            repeat {
                result.outputs.append(buffer.pop(now: now))
                pops += 1
            } while !buffer.tickComplete && pops < 16
            result.maximumTarget = max(result.maximumTarget, buffer.statistics.targetDelayNanoseconds)
        }
        result.buffer = buffer
        return result
    }
}
