/// Per-source reception state of RFC 3550 Appendix A.1 (sequence number validity,
/// probation, wrap-around cycles) and A.3 (expected, lost and fraction lost), as a value
/// that is fed one sequence number per received packet.
///
/// A new source is on probation until `minSequential` packets arrive in sequence; a jump
/// of `maxDropout` or more ahead (or `maxMisorder` or more behind) is taken as a restart
/// only when the next packet confirms it, as the appendix prescribes.
public struct RTPSourceState: Sendable, Hashable {
    /// The modulus of the 16-bit sequence number.
    static let sequenceModulus: UInt32 = 1 << 16

    /// What `update(sequenceNumber:)` concluded about one packet.
    public enum Verdict: Sendable, Hashable {
        /// In sequence (or a tolerated loss, duplicate or reordering); counted as received.
        case valid
        /// The source is still on probation; not counted yet.
        case probation
        /// A large jump; not counted. If the next packet follows it, the state restarts
        /// from there (the sender probably restarted).
        case badSequence
        /// The jump was confirmed: statistics restarted at this packet, which is counted.
        case restarted
    }

    public let maxDropout: UInt16
    public let maxMisorder: UInt16
    public let minSequential: Int

    /// Highest sequence number seen (16 bits).
    public private(set) var maxSequence: UInt16
    /// Number of times the sequence number wrapped (the "cycles" of A.1, unshifted).
    public private(set) var cycles: UInt32
    /// First sequence number counted (since the last restart).
    public private(set) var baseSequence: UInt16
    /// Packets counted as received since the last restart.
    public private(set) var received: UInt32
    /// Packets still needed in sequence before the source is valid.
    public private(set) var probation: Int
    private var badSequence: UInt32
    private var expectedPrior: UInt32
    private var receivedPrior: UInt32

    /// Starts tracking a source at its first packet, per A.1, and accounts for that
    /// packet: it begins probation (and is not counted) unless `minSequential` is 0 or 1.
    public init(firstSequenceNumber: UInt16, maxDropout: UInt16 = 3000, maxMisorder: UInt16 = 100, minSequential: Int = 2) {
        self.maxDropout = maxDropout
        self.maxMisorder = maxMisorder
        self.minSequential = max(minSequential, 0)
        maxSequence = firstSequenceNumber
        cycles = 0
        baseSequence = firstSequenceNumber
        received = 0
        probation = 0
        badSequence = Self.sequenceModulus + 1
        expectedPrior = 0
        receivedPrior = 0
        reset(to: firstSequenceNumber)
        probation = self.minSequential
        if probation == 0 {
            received = 1
        } else {
            // A.1: a new source starts with max_seq = seq - 1 and its first packet then
            // goes through update_seq like any other.
            maxSequence = firstSequenceNumber &- 1
            update(sequenceNumber: firstSequenceNumber)
        }
    }

    /// A.1 `init_seq`.
    private mutating func reset(to sequence: UInt16) {
        baseSequence = sequence
        maxSequence = sequence
        badSequence = Self.sequenceModulus + 1
        cycles = 0
        received = 0
        receivedPrior = 0
        expectedPrior = 0
    }

    /// A.1 `update_seq`: accounts for one received packet.
    @discardableResult
    public mutating func update(sequenceNumber sequence: UInt16) -> Verdict {
        let delta = sequence &- maxSequence
        if probation > 0 {
            if sequence == maxSequence &+ 1 {
                probation -= 1
                maxSequence = sequence
                if probation == 0 {
                    reset(to: sequence)
                    received &+= 1
                    return .valid
                }
            } else {
                probation = minSequential - 1
                maxSequence = sequence
            }
            return .probation
        } else if delta < maxDropout {
            // In order, with a permissible gap.
            if sequence < maxSequence { cycles &+= 1 }
            maxSequence = sequence
        } else if UInt32(delta) <= Self.sequenceModulus - UInt32(maxMisorder) {
            // A very large jump.
            if UInt32(sequence) == badSequence {
                // Two sequential packets: the other side restarted without telling us.
                reset(to: sequence)
                received &+= 1
                return .restarted
            }
            badSequence = (UInt32(sequence) + 1) & (Self.sequenceModulus - 1)
            return .badSequence
        }
        // Otherwise a duplicate or reordered packet: counted, max unchanged.
        received &+= 1
        return .valid
    }

    /// Highest sequence number seen, extended with the wrap count (A.1 `cycles + max_seq`,
    /// the "extended highest sequence number received" of a report block).
    public var extendedHighestSequenceNumber: UInt32 {
        (cycles << 16) | UInt32(maxSequence)
    }

    /// Packets expected since the last restart (A.3).
    public var expected: UInt32 {
        extendedHighestSequenceNumber &- UInt32(baseSequence) &+ 1
    }

    /// Cumulative packets lost (A.3): expected minus received, negative when duplicates
    /// arrived; not clamped (see `ReceptionReport.cumulativeLost` for the 24-bit field).
    public var lost: Int64 {
        Int64(expected) - Int64(received)
    }

    /// The numbers of one reception report interval (A.3).
    public struct ReceptionReport: Sendable, Hashable {
        /// Fraction of packets lost in the interval, in 1/256 units (0 when packets were
        /// duplicated so that more arrived than expected).
        public let fractionLost: UInt8
        /// Cumulative lost, clamped to the signed 24 bits of the report block field.
        public let cumulativeLost: Int32
        public let extendedHighestSequenceNumber: UInt32
        public let expectedInInterval: UInt32
        public let receivedInInterval: UInt32
    }

    /// Computes the loss figures for a report block and starts a new interval (A.3).
    public mutating func makeReceptionReport() -> ReceptionReport {
        let expectedNow = expected
        let expectedInterval = expectedNow &- expectedPrior
        expectedPrior = expectedNow
        let receivedInterval = received &- receivedPrior
        receivedPrior = received
        let lostInterval = Int64(expectedInterval) - Int64(receivedInterval)
        let fraction: UInt8
        if expectedInterval == 0 || lostInterval <= 0 {
            fraction = 0
        } else {
            fraction = UInt8(clamping: (lostInterval << 8) / Int64(expectedInterval))
        }
        return ReceptionReport(
            fractionLost: fraction,
            cumulativeLost: Int32(clamping: min(max(lost, -0x80_0000), 0x7f_ffff)),
            extendedHighestSequenceNumber: extendedHighestSequenceNumber,
            expectedInInterval: expectedInterval,
            receivedInInterval: receivedInterval
        )
    }
}
