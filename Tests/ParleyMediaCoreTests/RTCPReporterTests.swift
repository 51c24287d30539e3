import Foundation
import ParleyMediaCore
import ParleyRTP
import ParleyTestSupport
import Testing

private let ms: UInt64 = 1_000_000

/// Two legs' RTCP reporters pumped against each other in memory with a manual clock: each
/// sends 20 ms RTP packets to the other, and every compound goes through serialize/parse.
private struct RTCPLink {
    var a: RTCPReporter
    var b: RTCPReporter
    /// One-way delay of every packet, both directions.
    var delay: UInt64
    /// Indices of A's RTP packets the network drops on the way to B.
    var dropAToB: Set<Int> = []
    var generator = SeededGenerator(seed: 0x7274_6370)
    /// Every compound B sent, parsed back, with B's receive state for A right after.
    var compoundsFromB: [(RTCPCompoundPacket, highest: UInt32)] = []
    var compoundsFromA: [RTCPCompoundPacket] = []

    static let ssrcA: UInt32 = 0xaaaa_0001
    static let ssrcB: UInt32 = 0xbbbb_0002

    init(delay: UInt64, clockA: MediaClock, clockB: MediaClock) {
        self.delay = delay
        a = RTCPReporter(configuration: .init(ssrc: Self.ssrcA, cname: "a@parley", clockRate: 48_000, clock: clockA))
        b = RTCPReporter(configuration: .init(ssrc: Self.ssrcB, cname: "b@parley", clockRate: 48_000, clock: clockB))
    }

    /// Runs `seconds` of media in 1 ms steps. Returns how many RTP packets A sent.
    @discardableResult
    mutating func run(seconds: Int, start: UInt64 = 10_000 * ms, aSends: Bool = true, bSends: Bool = true) -> Int {
        var inFlight: [(at: UInt64, toB: Bool, rtp: (seq: UInt16, ts: UInt32, size: Int)?, rtcp: [UInt8]?)] = []
        var sent = 0
        for step in 0..<UInt64(seconds * 1000) {
            let now = start + step * ms
            // Deliver everything due (sent `delay` ago).
            while let first = inFlight.first, first.at <= now {
                inFlight.removeFirst()
                if let rtp = first.rtp {
                    if first.toB {
                        b.recordReceived(ssrc: Self.ssrcA, sequenceNumber: rtp.seq, timestamp: rtp.ts, payloadBytes: rtp.size, now: first.at)
                    } else {
                        a.recordReceived(ssrc: Self.ssrcB, sequenceNumber: rtp.seq, timestamp: rtp.ts, payloadBytes: rtp.size, now: first.at)
                    }
                }
                if let bytes = first.rtcp {
                    let compound = try! RTCPCompoundPacket(parsing: bytes)
                    if first.toB { b.receive(compound, now: first.at) } else { a.receive(compound, now: first.at) }
                }
            }
            if step % 20 == 0 {
                let k = Int(step / 20)
                let ts = UInt32(truncatingIfNeeded: k * 960)
                if aSends {
                    a.recordSent(timestamp: 1000 &+ ts, payloadBytes: 80, now: now)
                    if !dropAToB.contains(k) {
                        inFlight.append((now + delay, true, (UInt16(truncatingIfNeeded: 500 + k), 1000 &+ ts, 80), nil))
                    }
                    sent += 1
                }
                if bSends {
                    b.recordSent(timestamp: 77 &+ ts, payloadBytes: 60, now: now)
                    inFlight.append((now + delay, false, (UInt16(truncatingIfNeeded: 9000 + k), 77 &+ ts, 60), nil))
                }
            }
            if let compound = a.poll(now: now, using: &generator) {
                compoundsFromA.append(compound)
                inFlight.append((now + delay, true, nil, try! compound.serialized()))
            }
            if let compound = b.poll(now: now, using: &generator) {
                let highest = b.receiveStatistics[Self.ssrcA]?.source?.extendedHighestSequenceNumber ?? 0
                compoundsFromB.append((try! RTCPCompoundPacket(parsing: compound.serialized()), highest))
                inFlight.append((now + delay, false, nil, try! compound.serialized()))
            }
        }
        return sent
    }
}

@Suite("RTCP reporting")
struct RTCPReporterTests {
    @Test("RTT = A - LSR - DLSR equals twice the one-way delay, whatever the clocks' offsets (RFC 3550 §6.4.1)")
    func roundTripTime() {
        for delay: UInt64 in [1 * ms, 37 * ms, 150 * ms] {
            // The two ends' wall clocks disagree by hours; RTT must not care.
            var link = RTCPLink(delay: delay,
                                clockA: MediaClock(unixNanosecondsAtZero: 1_790_000_000 * 1_000_000_000),
                                clockB: MediaClock(unixNanosecondsAtZero: 1_790_012_345 * 1_000_000_000 + 123_456_789))
            link.run(seconds: 30)
            let rttA = link.a.statistics.roundTripTimeMilliseconds
            let rttB = link.b.statistics.roundTripTimeMilliseconds
            let expected = Double(2 * delay) / 1e6
            #expect(rttA != nil && abs(rttA! - expected) < 1, "delay \(delay): A measured \(String(describing: rttA))")
            #expect(rttB != nil && abs(rttB! - expected) < 1, "delay \(delay): B measured \(String(describing: rttB))")
            #expect(link.a.lastRemoteReport?.block.lastSenderReport != 0)
        }
    }

    @Test("reported loss fraction and cumulative loss match the injected loss (RFC 3550 A.3)")
    func lossFraction() throws {
        var link = RTCPLink(delay: 25 * ms, clockA: MediaClock(unixNanosecondsAtZero: 0),
                            clockB: MediaClock(unixNanosecondsAtZero: 5_000_000_000))
        var generator = SeededGenerator(seed: 0x105e)
        // About 5 % loss, none among the first packets (probation).
        link.dropAToB = Set((10..<1500).filter { _ in generator.below(100) < 5 })
        link.run(seconds: 30)
        #expect(link.compoundsFromB.count >= 4)
        let dropped = link.dropAToB
        // Each block: the loss over exactly the sequence numbers its interval covered.
        var previousHighest: UInt32 = 500
        for (compound, highest) in link.compoundsFromB {
            guard let block = reportBlocks(compound).first(where: { $0.ssrc == RTCPLink.ssrcA }) else {
                Issue.record("no block about A")
                continue
            }
            #expect(block.extendedHighestSequenceNumber == highest)
            let covered = (previousHighest + 1)...highest
            let lost = covered.filter { dropped.contains(Int($0) - 500) }.count
            #expect(Int(block.fractionLost) == lost * 256 / covered.count)
            let cumulative = (501...highest).filter { dropped.contains(Int($0) - 500) }.count
            #expect(Int(block.cumulativeLost) == cumulative)
            previousHighest = highest
        }
        // What A learns: the remote's view of our stream.
        let stats = link.a.statistics
        let outbound = try #require(stats.outboundFractionLost)
        #expect(outbound > 0.01 && outbound < 0.10)
        #expect(stats.outboundCumulativeLost == Int64(reportBlocks(link.compoundsFromB.last!.0)[0].cumulativeLost))
        // And B's own inbound view agrees with the injected count.
        let bStats = link.b.statistics
        let highestIndex = Int(link.b.receiveStatistics[RTCPLink.ssrcA]!.source!.extendedHighestSequenceNumber) - 500
        #expect(bStats.inboundCumulativeLost == Int64(dropped.filter { $0 <= highestIndex }.count))
        // The last packet (sent 20 ms before the end, 25 ms on the way) is still in flight.
        #expect(bStats.packetsReceived == UInt64((0..<1499).filter { !dropped.contains($0) }.count))
        #expect(stats.packetsSent == 1500)
        #expect(stats.octetsSent == 1500 * 80)
    }

    @Test("SR while sending media, RR when not; SDES CNAME always; sender info counts what was sent")
    func reportKinds() throws {
        var link = RTCPLink(delay: 10 * ms, clockA: MediaClock(unixNanosecondsAtZero: 0),
                            clockB: MediaClock(unixNanosecondsAtZero: 0))
        link.run(seconds: 12, aSends: true, bSends: false)
        let fromA = try #require(link.compoundsFromA.last)
        guard case .senderReport(let sr) = fromA.packets.first else {
            Issue.record("A sends media: expected an SR first, got \(fromA.packets)")
            return
        }
        #expect(sr.ssrc == RTCPLink.ssrcA)
        #expect(sr.packetCount > 0 && sr.octetCount == sr.packetCount * 80)
        guard case .sourceDescription(let sdes) = fromA.packets.last else {
            Issue.record("expected SDES last")
            return
        }
        #expect(sdes.chunks.first?.cname == "a@parley")
        let fromB = try #require(link.compoundsFromB.last?.0)
        guard case .receiverReport(let rr) = fromB.packets.first else {
            Issue.record("B sends no media: expected an RR, got \(fromB.packets)")
            return
        }
        #expect(rr.ssrc == RTCPLink.ssrcB)
        #expect(rr.reportBlocks.map(\.ssrc) == [RTCPLink.ssrcA])
        // B's blocks echo A's SR (LSR), so A measures the RTT; A hears no media from B,
        // so it sends B no block and B measures none.
        let rtt = try #require(link.a.statistics.roundTripTimeMilliseconds)
        #expect(abs(rtt - 20) < 1)
        #expect(link.b.statistics.roundTripTimeMilliseconds == nil)
    }

    @Test("SR RTP timestamp is the last sent one advanced to the report time")
    func senderReportTimestamp() {
        var send = SendStatistics(ssrc: 1, clockRate: 48_000)
        send.record(timestamp: 1000, payloadBytes: 10, now: 1_000 * ms)
        let sr = send.makeSenderReport(now: 1_015 * ms, clock: MediaClock(unixNanosecondsAtZero: 0))
        #expect(sr.rtpTimestamp == 1000 + 720)
        #expect(sr.ntpTimestamp == NTPTimestamp(unixNanoseconds: Int64(1_015 * ms)))
        #expect(!send.sentSinceLastReport)
    }

    @Test("report intervals: first after 0.5 x nominal, then nominal, each x [0.5, 1.5] (RFC 3550 §6.2)")
    func schedule() {
        var generator = SeededGenerator(seed: 42)
        var reporter = RTCPReporter(configuration: .init(ssrc: 1, cname: "x", clockRate: 48_000, clock: MediaClock(unixNanosecondsAtZero: 0)))
        var now: UInt64 = 1_000 * ms
        #expect(reporter.poll(now: now, using: &generator) == nil)
        let first = reporter.nextReportTime! - now
        #expect(first >= 1_250 * ms && first <= 3_750 * ms)
        var intervals: [UInt64] = []
        var last: UInt64?
        while intervals.count < 200 {
            now += 10 * ms
            if reporter.poll(now: now, using: &generator) != nil {
                if let last { intervals.append(now - last) }
                last = now
            }
        }
        #expect(intervals.allSatisfy { $0 >= 2_500 * ms && $0 <= 7_510 * ms })
        // Randomised, not fixed.
        #expect(Set(intervals).count > 50)
        let mean = Double(intervals.reduce(0, +)) / Double(intervals.count) / 1e6
        #expect(mean > 4_500 && mean < 5_500)
        #expect(reporter.reportsSent == 201)
    }

    @Test("interarrival jitter: 0 for a steady stream, about 10 ms for alternating 0/10 ms delay (A.8)")
    func jitter() throws {
        var steady = ReceiveStatistics(ssrc: 5, clockRate: 48_000)
        var alternating = ReceiveStatistics(ssrc: 5, clockRate: 48_000)
        for k in 0..<500 {
            let sent = UInt64(k) * 20 * ms
            steady.record(sequenceNumber: UInt16(k), timestamp: UInt32(k * 960), payloadBytes: 80, now: sent + 30 * ms)
            alternating.record(sequenceNumber: UInt16(k), timestamp: UInt32(k * 960), payloadBytes: 80,
                               now: sent + (k % 2 == 0 ? 30 : 40) * ms)
        }
        #expect(steady.jitterMilliseconds == 0)
        #expect(abs(alternating.jitterMilliseconds - 10) < 0.5)
        let made = alternating.makeReportBlock(now: 10_000 * ms)
        let block = try #require(made)
        #expect(block.jitter > 470 && block.jitter <= 480)
        #expect(block.fractionLost == 0 && block.cumulativeLost == 0)
        #expect(block.lastSenderReport == 0 && block.delaySinceLastSenderReport == 0)
    }

    @Test("forged SSRCs cannot grow the per-source table; our own SSRC is ignored")
    func boundedSources() {
        var reporter = RTCPReporter(configuration: .init(ssrc: 1, cname: "x", clockRate: 48_000, clock: MediaClock(unixNanosecondsAtZero: 0)))
        for ssrc in 0..<UInt32(10_000) {
            reporter.recordReceived(ssrc: ssrc, sequenceNumber: 1, timestamp: 1, payloadBytes: 1, now: 0)
        }
        #expect(reporter.receiveStatistics.count == reporter.configuration.maximumSources)
        #expect(reporter.receiveStatistics[1] == nil)
        let compound = reporter.makeReport(now: 0)
        #expect(throws: Never.self) { try compound.serialized() }
    }

    @Test("LegStatistics encodes to JSON with camelCase fields, unknown figures omitted")
    func legJSON() throws {
        var stats = LegStatistics()
        stats.packetsSent = 3
        stats.roundTripTimeMilliseconds = 42.5
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(stats)) as? [String: Any]
        let object = try #require(json)
        #expect(object["packetsSent"] as? Int == 3)
        #expect(object["roundTripTimeMilliseconds"] as? Double == 42.5)
        #expect(object["inboundJitterMilliseconds"] as? Double == 0)
        #expect(object["outboundFractionLost"] == nil)
    }
}

private func reportBlocks(_ compound: RTCPCompoundPacket) -> [RTCPReportBlock] {
    compound.packets.flatMap { packet -> [RTCPReportBlock] in
        switch packet {
        case .senderReport(let sr): sr.reportBlocks
        case .receiverReport(let rr): rr.reportBlocks
        default: []
        }
    }
}
