public import ParleyRTP
import ParleyWireCore

/// RTCP for one media leg with one local SSRC, sans-I/O: it keeps the send and receive
/// statistics, says when the next compound report is due, builds it, and digests the
/// compounds the remote sends.
///
/// Timing (RFC 3550 §6.2, simplified for a two-party leg at audio rates): reports are
/// `nominalInterval` apart (5 s), each interval multiplied by a random factor in
/// [0.5, 1.5] drawn from the caller's generator so that legs do not synchronise; the
/// first report comes after half an interval (§6.2: "the initial ... interval"), also
/// randomised.
///
/// Content (§6.1, §6.4): an SR when we sent media since the last report, otherwise an RR,
/// with one report block per remote source heard (at most 31), then SDES with our CNAME.
///
/// Usage: call `recordSent`/`recordReceived` per RTP packet, `receive(_:now:)` per RTCP
/// compound, and `poll(now:using:)` whenever the I/O loop wakes (at the latest at
/// `nextReportTime`); send what it returns.
public struct RTCPReporter: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Our SSRC.
        public var ssrc: UInt32
        /// Our canonical name (SDES CNAME, §6.5.1).
        public var cname: String
        /// RTP clock rate of the media (for RTP timestamps and jitter units).
        public var clockRate: UInt32
        /// Maps `now` to NTP for sender reports and round-trip times.
        public var clock: MediaClock
        /// The mean time between reports: RFC 3550's 5 s unless set.
        public var nominalInterval: Duration = .seconds(5)
        /// The interval WebRTC legs use (SAVPF, RFC 4585 §3.4: no 5 s minimum; at audio
        /// rates with two members the bandwidth rule allows well under a second).
        public static let feedbackProfileInterval: Duration = .seconds(1)
        /// Remote sources tracked at most (a leg has one; the bound keeps a flood of
        /// forged SSRCs from growing memory).
        public var maximumSources: Int = 8

        public init(ssrc: UInt32, cname: String, clockRate: UInt32, clock: MediaClock) {
            self.ssrc = ssrc
            self.cname = cname
            self.clockRate = clockRate
            self.clock = clock
        }
    }

    /// What the remote last reported about our stream.
    public struct RemoteReport: Sendable, Hashable {
        public var block: RTCPReportBlock
        /// When the report arrived.
        public var arrival: UInt64
        /// A - LSR - DLSR, nil when the block had no LSR.
        public var roundTripTimeNanoseconds: Int64?
    }

    public let configuration: Configuration
    public private(set) var sendStatistics: SendStatistics
    /// Per remote SSRC.
    public private(set) var receiveStatistics: [UInt32: ReceiveStatistics] = [:]
    /// The last report block about our SSRC and the RTT derived from it.
    public private(set) var lastRemoteReport: RemoteReport?
    /// The latest round-trip time measured (kept when a later block has no LSR).
    public private(set) var roundTripTimeNanoseconds: Int64?
    /// When `poll` will next produce a report; nil until the first `poll`.
    public private(set) var nextReportTime: UInt64?
    /// Compounds built so far.
    public private(set) var reportsSent: UInt64 = 0

    public init(configuration: Configuration) {
        self.configuration = configuration
        sendStatistics = SendStatistics(ssrc: configuration.ssrc, clockRate: configuration.clockRate)
    }

    // MARK: Events

    /// Accounts for an RTP packet we sent at `now`.
    public mutating func recordSent(timestamp: UInt32, payloadBytes: Int, now: UInt64) {
        sendStatistics.record(timestamp: timestamp, payloadBytes: payloadBytes, now: now)
    }

    /// Accounts for an RTP packet received at `now` (sequence accounting and jitter).
    public mutating func recordReceived(ssrc: UInt32, sequenceNumber: UInt16, timestamp: UInt32, payloadBytes: Int, now: UInt64,
                                        updatesJitter: Bool = true) {
        guard ssrc != configuration.ssrc else { return }
        guard var statistics = statisticsEntry(for: ssrc) else { return }
        statistics.record(sequenceNumber: sequenceNumber, timestamp: timestamp, payloadBytes: payloadBytes, now: now,
                          updatesJitter: updatesJitter)
        receiveStatistics[ssrc] = statistics
    }

    /// Accounts for a received RTP packet.
    public mutating func recordReceived(_ packet: RTPPacket, now: UInt64) {
        recordReceived(ssrc: packet.ssrc, sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp,
                       payloadBytes: packet.payload.count, now: now)
    }

    /// Digests a compound from the remote: sender reports (for our LSR/DLSR) and report
    /// blocks about our SSRC (remote-measured loss and jitter, and the round-trip time
    /// A - LSR - DLSR of RFC 3550 §6.4.1, A being `now` on our clock).
    public mutating func receive(_ compound: RTCPCompoundPacket, now: UInt64) {
        for packet in compound.packets {
            switch packet {
            case .senderReport(let report):
                if report.ssrc != configuration.ssrc, var statistics = statisticsEntry(for: report.ssrc) {
                    statistics.record(senderReport: report, now: now)
                    receiveStatistics[report.ssrc] = statistics
                }
                digest(report.reportBlocks, now: now)
            case .receiverReport(let report):
                digest(report.reportBlocks, now: now)
            default:
                continue
            }
        }
    }

    // MARK: Reports

    /// The compound to send at `now`, if one is due; schedules the next. The first call
    /// only schedules the first report.
    public mutating func poll(now: UInt64, using generator: inout some RandomNumberGenerator) -> RTCPCompoundPacket? {
        guard let due = nextReportTime else {
            nextReportTime = now &+ randomizedInterval(scale: 0.5, using: &generator)
            return nil
        }
        guard now >= due else { return nil }
        nextReportTime = now &+ randomizedInterval(scale: 1, using: &generator)
        return makeReport(now: now)
    }

    /// Builds a compound report for `now` regardless of the schedule (e.g. before BYE),
    /// starting new reporting intervals.
    public mutating func makeReport(now: UInt64) -> RTCPCompoundPacket {
        var blocks: [RTCPReportBlock] = []
        for ssrc in receiveStatistics.keys.sorted() where blocks.count < 31 {
            if let block = receiveStatistics[ssrc]?.makeReportBlock(now: now) { blocks.append(block) }
        }
        let report: RTCPPacket
        if sendStatistics.sentSinceLastReport {
            var sr = sendStatistics.makeSenderReport(now: now, clock: configuration.clock)
            sr.reportBlocks = blocks
            report = .senderReport(sr)
        } else {
            sendStatistics.markReported()
            report = .receiverReport(RTCPReceiverReport(ssrc: configuration.ssrc, reportBlocks: blocks))
        }
        // CNAME is at most 255 octets (§6.5); a longer configured name is cut.
        let cname = Array(configuration.cname.utf8.prefix(255))
        let sdes = RTCPSourceDescription(chunks: [
            .init(ssrc: configuration.ssrc, items: [.init(type: .cname, value: cname)]),
        ])
        reportsSent &+= 1
        return RTCPCompoundPacket(packets: [report, .sourceDescription(sdes)])
    }

    /// The leg's figures now.
    public var statistics: LegStatistics {
        var result = LegStatistics()
        result.packetsSent = sendStatistics.packetCount
        result.octetsSent = sendStatistics.octetCount
        for (_, source) in receiveStatistics {
            result.packetsReceived &+= source.packetsReceived
            result.octetsReceived &+= source.payloadOctetsReceived
            result.inboundCumulativeLost &+= source.cumulativeLost
            result.inboundFractionLost = max(result.inboundFractionLost, Double(source.lastFractionLost) / 256)
            result.inboundJitterMilliseconds = max(result.inboundJitterMilliseconds, source.jitterMilliseconds)
        }
        if let remote = lastRemoteReport {
            result.outboundFractionLost = Double(remote.block.fractionLost) / 256
            result.outboundCumulativeLost = Int64(remote.block.cumulativeLost)
            result.outboundJitterMilliseconds = Double(remote.block.jitter) / Double(max(configuration.clockRate, 1)) * 1000
        }
        result.roundTripTimeMilliseconds = roundTripTimeNanoseconds.map { Double($0) / 1_000_000 }
        return result
    }

    // MARK: Internals

    private func statisticsEntry(for ssrc: UInt32) -> ReceiveStatistics? {
        if let existing = receiveStatistics[ssrc] { return existing }
        guard receiveStatistics.count < configuration.maximumSources else { return nil }
        return ReceiveStatistics(ssrc: ssrc, clockRate: configuration.clockRate)
    }

    private mutating func digest(_ blocks: [RTCPReportBlock], now: UInt64) {
        for block in blocks where block.ssrc == configuration.ssrc {
            let arrival = configuration.clock.ntpTimestamp(at: now).compact
            let rtt = NTPTimestamp.roundTripTime(arrival: arrival, lastSenderReport: block.lastSenderReport,
                                                 delaySinceLastSenderReport: block.delaySinceLastSenderReport)
                .map { NTPTimestamp.nanoseconds(fromCompact: $0) }
            if let rtt { roundTripTimeNanoseconds = rtt }
            lastRemoteReport = RemoteReport(block: block, arrival: now, roundTripTimeNanoseconds: rtt)
        }
    }

    /// `scale` x nominal interval x a factor drawn uniformly from [0.5, 1.5] (§6.3.1).
    private func randomizedInterval(scale: Double, using generator: inout some RandomNumberGenerator) -> UInt64 {
        let nominal = Double(max(configuration.nominalInterval.wholeNanoseconds, 0))
        let factor = 0.5 + Double(generator.next() >> 11) / Double(1 << 53)
        return UInt64(nominal * scale * factor)
    }
}
