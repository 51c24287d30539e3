import ParleyRTP

/// What one conference participant received from the mixer: packets, loss from sequence
/// gaps (RFC 3550 A.1 and A.3) and interarrival jitter (A.8), and the longest silence
/// between two packets. Time is an input (arrival in seconds on any monotonic clock), so
/// the numbers can be checked with made-up arrivals.
struct ConferenceReceiveStatistics: Sendable, Equatable {
    /// The RTP clock of the stream: 48000 for Opus whatever the rate inside (RFC 7587 4.1).
    let clockRate: Int
    private(set) var packets = 0
    private(set) var bytes = 0
    private(set) var source: RTPSourceState?
    private(set) var jitterEstimator = RTPJitterEstimator()
    private(set) var lastArrival: Double?
    /// The longest time between two packets, in seconds.
    private(set) var longestGap = 0.0

    init(clockRate: Int) {
        self.clockRate = clockRate
    }

    /// Accounts for one packet that arrived at `arrival` seconds. A datagram that is not
    /// RTP is left out (false).
    @discardableResult
    mutating func record(datagram: UnsafeRawBufferPointer, arrival: Double) -> Bool {
        // RFC 3550 5.1: version 2, the sequence number at bytes 2-3, the timestamp at 4-7.
        guard datagram.count >= RTPPacket.fixedHeaderSize, datagram[0] >> 6 == 2 else { return false }
        // RTCP (RFC 5761 4: packet types 192-223 in the second byte) is not media.
        guard !(192...223).contains(datagram[1]) else { return false }
        let sequence = UInt16(datagram[2]) << 8 | UInt16(datagram[3])
        let timestamp = UInt32(datagram[4]) << 24 | UInt32(datagram[5]) << 16 | UInt32(datagram[6]) << 8 | UInt32(datagram[7])
        record(sequenceNumber: sequence, timestamp: timestamp, bytes: datagram.count, arrival: arrival)
        return true
    }

    /// Accounts for one packet's sequence number and timestamp.
    mutating func record(sequenceNumber: UInt16, timestamp: UInt32, bytes: Int, arrival: Double) {
        packets += 1
        self.bytes += bytes
        if source == nil {
            // Counted from the first packet: no probation, Janus is a known sender.
            source = RTPSourceState(firstSequenceNumber: sequenceNumber, minSequential: 0)
        } else {
            source?.update(sequenceNumber: sequenceNumber)
        }
        let arrivalUnits = UInt32(truncatingIfNeeded: Int64((arrival * Double(clockRate)).rounded()))
        jitterEstimator.update(arrivalTime: arrivalUnits, rtpTimestamp: timestamp)
        if let last = lastArrival { longestGap = max(longestGap, arrival - last) }
        lastArrival = arrival
    }

    /// Packets the sequence numbers say were sent and did not arrive (0 or more: duplicates
    /// do not make it negative).
    var lost: Int { max(0, Int(source?.lost ?? 0)) }

    /// Packets the sequence numbers say were sent since the first.
    var expected: Int { Int(source?.expected ?? 0) }

    /// The RFC 3550 interarrival jitter in milliseconds.
    var jitterMilliseconds: Double { Double(jitterEstimator.jitterTimes16) / 16 / Double(clockRate) * 1000 }

    /// What arrived between `earlier` (a copy taken before) and now: packets, and the loss
    /// over the sequence numbers that came in between.
    func since(_ earlier: ConferenceReceiveStatistics) -> (packets: Int, expected: Int, lost: Int) {
        let expectedBetween = expected - earlier.expected
        return (packets - earlier.packets, expectedBetween, max(0, lost - earlier.lost))
    }
}
