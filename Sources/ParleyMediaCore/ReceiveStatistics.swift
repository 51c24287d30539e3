public import ParleyRTP

/// Reception statistics for one remote source (SSRC), as RTCP report blocks need them:
/// RFC 3550 A.1/A.3 sequence accounting (`RTPSourceState`), A.8 interarrival jitter
/// (`RTPJitterEstimator`), and the last sender report heard from the source for the
/// LSR/DLSR fields (§6.4.1).
public struct ReceiveStatistics: Sendable {
    public let ssrc: UInt32
    public let clockRate: UInt32

    public private(set) var source: RTPSourceState?
    public private(set) var jitterEstimator = RTPJitterEstimator()
    /// Every packet recorded, valid or not.
    public private(set) var packetsReceived: UInt64 = 0
    public private(set) var payloadOctetsReceived: UInt64 = 0
    /// The loss fraction of the last report block made (1/256 units).
    public private(set) var lastFractionLost: UInt8 = 0
    /// Compact NTP of the last SR from this source (its LSR) and when it arrived.
    public private(set) var lastSenderReport: (compact: UInt32, arrival: UInt64)?
    /// Sender info of that SR (packets and octets the source says it sent).
    public private(set) var remoteSenderPacketCount: UInt32?
    public private(set) var remoteSenderOctetCount: UInt32?

    public init(ssrc: UInt32, clockRate: UInt32) {
        self.ssrc = ssrc
        self.clockRate = max(clockRate, 1)
    }

    /// Accounts for one RTP packet from this source arriving at `now`.
    /// `updatesJitter` false counts the packet for sequence and loss accounting only: an
    /// RFC 4733 event's packets share the stream's sequence numbers but carry the event's
    /// start as their timestamp, which would read as jitter.
    public mutating func record(sequenceNumber: UInt16, timestamp: UInt32, payloadBytes: Int, now: UInt64, updatesJitter: Bool = true) {
        packetsReceived &+= 1
        payloadOctetsReceived &+= UInt64(max(payloadBytes, 0))
        let verdict: RTPSourceState.Verdict
        if var state = source {
            verdict = state.update(sequenceNumber: sequenceNumber)
            source = state
        } else {
            source = RTPSourceState(firstSequenceNumber: sequenceNumber)
            verdict = .probation
        }
        if verdict == .restarted { jitterEstimator = RTPJitterEstimator() }
        if verdict != .badSequence, updatesJitter {
            // A.8: arrival time in the stream's timestamp units; only differences matter,
            // so truncating to 32 bits is fine.
            let arrival = UInt32(truncatingIfNeeded: MediaClock.rtpUnits(nanoseconds: now, clockRate: clockRate))
            jitterEstimator.update(arrivalTime: arrival, rtpTimestamp: timestamp)
        }
    }

    /// Remembers a sender report from this source (for LSR and DLSR).
    public mutating func record(senderReport: RTCPSenderReport, now: UInt64) {
        lastSenderReport = (senderReport.ntpTimestamp.compact, now)
        remoteSenderPacketCount = senderReport.packetCount
        remoteSenderOctetCount = senderReport.octetCount
    }

    /// Interarrival jitter in milliseconds.
    public var jitterMilliseconds: Double {
        Double(jitterEstimator.jitterTimes16) / 16 / Double(clockRate) * 1000
    }

    /// Cumulative packets lost (A.3; negative with duplicates), 0 before the source is valid.
    public var cumulativeLost: Int64 { source.map { $0.probation > 0 ? 0 : $0.lost } ?? 0 }

    /// Packets expected since the source became valid.
    public var expected: UInt32 { source.map { $0.probation > 0 ? 0 : $0.expected } ?? 0 }

    /// A report block for an SR/RR sent at `now`, starting a new loss interval; nil until
    /// the source has passed probation.
    public mutating func makeReportBlock(now: UInt64) -> RTCPReportBlock? {
        guard var state = source, state.probation == 0 else { return nil }
        let report = state.makeReceptionReport()
        source = state
        lastFractionLost = report.fractionLost
        var lsr: UInt32 = 0
        var dlsr: UInt32 = 0
        if let last = lastSenderReport {
            lsr = last.compact
            let waited = now >= last.arrival ? now - last.arrival : 0
            dlsr = NTPTimestamp.compact(fromNanoseconds: Int64(clamping: waited))
        }
        return RTCPReportBlock(ssrc: ssrc, report: report, jitter: jitterEstimator.jitter,
                               lastSenderReport: lsr, delaySinceLastSenderReport: dlsr)
    }
}
