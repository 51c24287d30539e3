@testable import ParleyServer
import Testing

/// A room's talker reports: at most one per interval, the latest change winning.
@Suite("Talker report pacer")
struct TalkerReportPacerTests {
    static let start = ContinuousClock.now

    static func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test("the first change is reported at once; nothing more without a change")
    func firstChange() {
        var pacer = TalkerReportPacer<String>()
        #expect(pacer.due(now: Self.at(0)) == nil)
        pacer.note(["a"])
        #expect(pacer.due(now: Self.at(0)) == ["a"])
        #expect(pacer.due(now: Self.at(20)) == nil)
        #expect(pacer.due(now: Self.at(500)) == nil)
        #expect(pacer.reported == ["a"])
    }

    @Test("changes within the interval wait and coalesce to the latest")
    func coalesces() {
        var pacer = TalkerReportPacer<String>(interval: .milliseconds(100))
        pacer.note(["a"])
        #expect(pacer.due(now: Self.at(0)) == ["a"])
        pacer.note(["a", "b"])
        #expect(pacer.due(now: Self.at(20)) == nil)
        pacer.note(["b"])
        #expect(pacer.due(now: Self.at(40)) == nil)
        #expect(pacer.due(now: Self.at(99)) == nil)
        #expect(pacer.due(now: Self.at(100)) == ["b"])
        #expect(pacer.due(now: Self.at(120)) == nil)
    }

    @Test("a change undone within the interval is not reported; nobody talking is")
    func undoneAndEmpty() {
        var pacer = TalkerReportPacer<String>()
        pacer.note(["a"])
        #expect(pacer.due(now: Self.at(0)) == ["a"])
        pacer.note([])
        pacer.note(["a"])
        #expect(pacer.due(now: Self.at(200)) == nil)
        pacer.note([])
        #expect(pacer.due(now: Self.at(220)) == [])
        #expect(pacer.reported.isEmpty)
    }

    @Test("ten changes a second at most, whatever the mixer reports")
    func rate() {
        var pacer = TalkerReportPacer<String>()
        var reports = 0
        for tick in 0..<50 {
            pacer.note(tick.isMultiple(of: 2) ? ["a"] : ["b"])
            if pacer.due(now: Self.at(tick * 20)) != nil { reports += 1 }
        }
        #expect(reports == 10)
    }
}
