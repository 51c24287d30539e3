/// One reception report block of an SR or RR (RFC 3550 §6.4.1), 24 bytes.
///
/// ```
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// |                 SSRC_1 (SSRC of first source)                 |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// | fraction lost |       cumulative number of packets lost       |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |           extended highest sequence number received           |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                      interarrival jitter                      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                         last SR (LSR)                         |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                   delay since last SR (DLSR)                  |
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// ```
public struct RTCPReportBlock: Sendable, Hashable, Encodable {
    public static let size = 24

    /// The source this block reports on.
    public var ssrc: UInt32
    /// Fraction lost since the previous report, in 1/256 units.
    public var fractionLost: UInt8
    /// Cumulative packets lost: a signed 24-bit field, negative when duplicates arrived.
    public var cumulativeLost: Int32
    public var extendedHighestSequenceNumber: UInt32
    /// Interarrival jitter in timestamp units.
    public var jitter: UInt32
    /// Middle 32 bits of the NTP timestamp of the last SR received from the source (0: none).
    public var lastSenderReport: UInt32
    /// Delay since that SR was received, in 1/65536 s.
    public var delaySinceLastSenderReport: UInt32

    public init(ssrc: UInt32, fractionLost: UInt8 = 0, cumulativeLost: Int32 = 0, extendedHighestSequenceNumber: UInt32,
                jitter: UInt32 = 0, lastSenderReport: UInt32 = 0, delaySinceLastSenderReport: UInt32 = 0) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = cumulativeLost
        self.extendedHighestSequenceNumber = extendedHighestSequenceNumber
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    /// A block from the A.1/A.3 source state and A.8 jitter estimate of a source.
    public init(ssrc: UInt32, report: RTPSourceState.ReceptionReport, jitter: UInt32,
                lastSenderReport: UInt32 = 0, delaySinceLastSenderReport: UInt32 = 0) {
        self.init(ssrc: ssrc, fractionLost: report.fractionLost, cumulativeLost: report.cumulativeLost,
                  extendedHighestSequenceNumber: report.extendedHighestSequenceNumber, jitter: jitter,
                  lastSenderReport: lastSenderReport, delaySinceLastSenderReport: delaySinceLastSenderReport)
    }

    static func parse(_ reader: inout SliceReader) throws(RTPError) -> RTCPReportBlock {
        let ssrc = try reader.uint32("report block")
        let lossWord = try reader.uint32("report block")
        // Sign-extend the 24-bit cumulative count.
        let cumulative = Int32(bitPattern: lossWord << 8) >> 8
        return RTCPReportBlock(
            ssrc: ssrc,
            fractionLost: UInt8(truncatingIfNeeded: lossWord >> 24),
            cumulativeLost: cumulative,
            extendedHighestSequenceNumber: try reader.uint32("report block"),
            jitter: try reader.uint32("report block"),
            lastSenderReport: try reader.uint32("report block"),
            delaySinceLastSenderReport: try reader.uint32("report block")
        )
    }

    func serialize(into output: inout [UInt8]) throws(RTPError) {
        guard (-0x80_0000...0x7f_ffff).contains(cumulativeLost) else {
            throw RTPError(.invalidValue, offset: output.count + 5, "report block cumulative lost",
                           "\(cumulativeLost) does not fit in 24 signed bits")
        }
        output.appendUInt32(ssrc)
        output.appendUInt32(UInt32(fractionLost) << 24 | (UInt32(bitPattern: cumulativeLost) & 0x00ff_ffff))
        output.appendUInt32(extendedHighestSequenceNumber)
        output.appendUInt32(jitter)
        output.appendUInt32(lastSenderReport)
        output.appendUInt32(delaySinceLastSenderReport)
    }
}

/// Report blocks of an SR/RR: exactly `count` of them, then any profile-specific
/// extension words (RFC 3550 §6.4.1).
func parseReportBlocks(count: Int, _ reader: inout SliceReader, packet: String) throws(RTPError) -> ([RTCPReportBlock], [UInt8]) {
    guard reader.remaining >= count * RTCPReportBlock.size else {
        throw RTPError(.invalidLength, offset: reader.offset, packet,
                       "report count \(count) needs \(count * RTCPReportBlock.size) bytes, length leaves \(reader.remaining)")
    }
    var blocks: [RTCPReportBlock] = []
    blocks.reserveCapacity(count)
    for _ in 0..<count { blocks.append(try RTCPReportBlock.parse(&reader)) }
    return (blocks, reader.rest())
}

func checkReportCount(_ blocks: [RTCPReportBlock], extensionBytes: Int, offset: Int, packet: String) throws(RTPError) {
    guard blocks.count <= 31 else {
        throw RTPError(.invalidValue, offset: offset, packet, "\(blocks.count) report blocks, at most 31 fit")
    }
    guard extensionBytes % 4 == 0 else {
        throw RTPError(.invalidValue, offset: offset, packet, "profile extension of \(extensionBytes) bytes is not whole words")
    }
}
