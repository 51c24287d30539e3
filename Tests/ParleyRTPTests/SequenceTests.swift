import Testing
import ParleyRTP

@Suite("Sequence numbers (RFC 3550 A.1, A.3) and unwrapping")
struct SequenceTests {
    @Test("RFC 3550 A.1 probation: two in-sequence packets make a source valid")
    func probation() {
        var state = RTPSourceState(firstSequenceNumber: 1000)
        #expect(state.probation == 1)
        #expect(state.received == 0)
        #expect(state.update(sequenceNumber: 1001) == .valid)
        #expect(state.probation == 0)
        #expect(state.baseSequence == 1001)
        #expect(state.received == 1)
        #expect(state.update(sequenceNumber: 1002) == .valid)
        #expect(state.received == 2)
        #expect(state.extendedHighestSequenceNumber == 1002)
    }

    @Test("RFC 3550 A.1 probation restarts on an out-of-sequence packet")
    func probationRestart() {
        var state = RTPSourceState(firstSequenceNumber: 1000)
        #expect(state.update(sequenceNumber: 1005) == .probation)
        #expect(state.probation == 1)
        #expect(state.update(sequenceNumber: 1006) == .valid)
        #expect(state.baseSequence == 1006)
    }

    @Test("RFC 3550 A.1 minSequential 0 and 1 count the first packet")
    func noProbation() {
        let zero = RTPSourceState(firstSequenceNumber: 65535, minSequential: 0)
        #expect(zero.received == 1)
        #expect(zero.extendedHighestSequenceNumber == 65535)
        #expect(zero.cycles == 0)
        let one = RTPSourceState(firstSequenceNumber: 0, minSequential: 1)
        #expect(one.received == 1)
        #expect(one.extendedHighestSequenceNumber == 0)
        #expect(one.cycles == 0)
    }

    @Test("RFC 3550 A.1 wrap-around counts a cycle")
    func wrap() {
        var state = RTPSourceState(firstSequenceNumber: 65533)
        for sequence: UInt16 in [65534, 65535, 0, 1] {
            #expect(state.update(sequenceNumber: sequence) == .valid)
        }
        #expect(state.cycles == 1)
        #expect(state.maxSequence == 1)
        #expect(state.extendedHighestSequenceNumber == 65537)
        #expect(state.expected == 4)
        #expect(state.lost == 0)
    }

    @Test("RFC 3550 A.1 reordering across the wrap does not count a cycle twice")
    func reorderAcrossWrap() {
        var state = RTPSourceState(firstSequenceNumber: 65532)
        state.update(sequenceNumber: 65533)
        state.update(sequenceNumber: 0)  // 65534, 65535 late
        #expect(state.cycles == 1)
        #expect(state.update(sequenceNumber: 65535) == .valid)
        #expect(state.update(sequenceNumber: 65534) == .valid)
        #expect(state.cycles == 1)
        #expect(state.extendedHighestSequenceNumber == 65536)
        #expect(state.received == 4)
        #expect(state.lost == 0)
    }

    @Test("RFC 3550 A.1 MAX_DROPOUT 3000: a gap of 2999 is loss, 3000 needs confirmation")
    func dropout() {
        var state = RTPSourceState(firstSequenceNumber: 9)
        state.update(sequenceNumber: 10)
        #expect(state.update(sequenceNumber: 10 + 2999) == .valid)
        #expect(state.lost == 2998)
        let at = state.maxSequence
        #expect(state.update(sequenceNumber: at &+ 3000) == .badSequence)
        #expect(state.maxSequence == at)
        #expect(state.update(sequenceNumber: at &+ 5) == .valid)  // back to normal
        #expect(state.update(sequenceNumber: at &+ 6000) == .badSequence)
        #expect(state.update(sequenceNumber: at &+ 6001) == .restarted)
        #expect(state.baseSequence == at &+ 6001)
        #expect(state.received == 1)
        #expect(state.cycles == 0)
    }

    @Test("RFC 3550 A.1 MAX_MISORDER 100: 100 behind is a jump, 99 behind is reordering")
    func misorder() {
        var state = RTPSourceState(firstSequenceNumber: 499)
        state.update(sequenceNumber: 500)
        #expect(state.update(sequenceNumber: 401) == .valid)
        #expect(state.update(sequenceNumber: 400) == .badSequence)
        #expect(state.maxSequence == 500)
    }

    @Test("RFC 3550 A.3 expected, lost and fraction lost over two intervals")
    func lossStatistics() {
        var state = RTPSourceState(firstSequenceNumber: 100)
        for sequence: UInt16 in [101, 102, 103, 106, 107, 108, 109, 110] { state.update(sequenceNumber: sequence) }
        // Base 101, highest 110: 10 expected, 8 received.
        var report = state.makeReceptionReport()
        #expect(report.expectedInInterval == 10)
        #expect(report.receivedInInterval == 8)
        #expect(report.cumulativeLost == 2)
        #expect(report.fractionLost == 51)  // (2 << 8) / 10
        #expect(report.extendedHighestSequenceNumber == 110)

        for sequence: UInt16 in 111...120 { state.update(sequenceNumber: sequence) }
        report = state.makeReceptionReport()
        #expect(report.expectedInInterval == 10)
        #expect(report.fractionLost == 0)
        #expect(report.cumulativeLost == 2)

        // Duplicates: more received than expected, cumulative goes negative, fraction 0.
        for _ in 0..<5 { state.update(sequenceNumber: 120) }
        report = state.makeReceptionReport()
        #expect(report.cumulativeLost == -3)
        #expect(report.fractionLost == 0)
        #expect(report.expectedInInterval == 0)
    }

    @Test("RFC 3550 A.3 cumulative lost clamps to 24 signed bits")
    func lostClamp() {
        var state = RTPSourceState(firstSequenceNumber: 0, minSequential: 0)
        // Advance 2000 at a time across many cycles without receiving much.
        var sequence: UInt16 = 0
        for _ in 0..<5000 {
            sequence &+= 2000
            state.update(sequenceNumber: sequence)
        }
        #expect(state.lost > 0x7f_ffff)
        let report = state.makeReceptionReport()
        #expect(report.cumulativeLost == 0x7f_ffff)
        #expect(report.fractionLost == 255)  // 1999/2000 of packets lost, rounded down
    }

    @Test("Sequence number unwrapper across the wrap, with reordering")
    func unwrapper() {
        var unwrapper = SequenceNumberUnwrapper()
        #expect(unwrapper.current == nil)
        #expect(unwrapper.unwrap(65534) == 65534)
        #expect(unwrapper.unwrap(65535) == 65535)
        #expect(unwrapper.unwrap(0) == 65536)
        #expect(unwrapper.unwrap(65535) == 65535)
        #expect(unwrapper.unwrap(2) == 65538)
        #expect(unwrapper.peek(1) == 65537)
        #expect(unwrapper.current == 65538)
        #expect(unwrapper.unwrap(32769) == 65538 + 32767)
        var backwards = SequenceNumberUnwrapper()
        #expect(backwards.unwrap(0) == 0)
        #expect(backwards.unwrap(65535) == -1)
        #expect(backwards.unwrap(32768) == -32768)  // 32769 ahead is nearer as 32767 behind
    }

    @Test("Timestamp unwrapper across the 32-bit wrap")
    func timestampUnwrapper() {
        var unwrapper = TimestampUnwrapper()
        #expect(unwrapper.unwrap(0xffff_ff00) == 0xffff_ff00)
        #expect(unwrapper.unwrap(0x0000_0100) == 0x1_0000_0100)
        #expect(unwrapper.unwrap(0xffff_fff0) == 0xffff_fff0)
        var value: UInt32 = 0xffff_fff0
        for _ in 0..<8 {
            value &+= 0x6000_0000
            _ = unwrapper.unwrap(value)
        }
        #expect(unwrapper.current == 0x3_ffff_fff0)
    }
}
