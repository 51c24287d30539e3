import ParleyWireCore
import ParleyCallCore
import ParleyCrypto
import ParleyMediaLegCore
import ParleyNetCore
@testable import ParleyServer
import ParleyTestSupport
import Synchronization
import Testing

/// A conference room's clock in the media anchor, in virtual time with its sockets in
/// memory: one timer per room runs the mixer's 20 ms tick for every seat, so a room of N
/// wakes its loop once a tick (not once per seat) and mixes once a tick; an empty room
/// keeps no timer, and a closed room's timer never fires again.
@Suite struct MediaAnchorRoomClockTests {
    typealias Device = MediaAnchorVirtualTimeTests.Device

    /// A media loop in virtual time that counts the timers scheduled on it and those that
    /// fired: what a room costs its loop in wake-ups.
    final class CountingMediaLoop: MediaLoop {
        let inner: ManualMediaLoop
        let scheduled = Atomic<Int>(0)
        let fired = Atomic<Int>(0)

        init(_ scheduler: ManualScheduler) { inner = ManualMediaLoop(scheduler) }

        var now: ContinuousClock.Instant { inner.now }
        var inScheduler: Bool { inner.inScheduler }
        @discardableResult func execute(_ work: @escaping @Sendable () -> Void) -> Bool { inner.execute(work) }
        @discardableResult func schedule(at deadline: ContinuousClock.Instant, _ work: @escaping @Sendable () -> Void) -> TimerID {
            scheduled.add(1, ordering: .relaxed)
            return inner.schedule(at: deadline) { [self] in
                fired.add(1, ordering: .relaxed)
                work()
            }
        }
        @discardableResult func cancel(_ timer: TimerID) -> Bool { inner.cancel(timer) }
        func runAndWait<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T? { inner.runAndWait(body) }
        func watch(_ socket: any MediaSocket, onReadable: @escaping () -> Void) throws(NetError) {
            try inner.watch(socket, onReadable: onReadable)
        }
        func unwatch(_ socket: any MediaSocket) { inner.unwatch(socket) }
    }

    /// What the anchor reported, by call id, and the talkers it handed the engine.
    final class Reports: Sendable {
        private let events = Mutex<[(event: MediaEvent, callID: String)]>([])
        private let talkerReports = Mutex<[[String]]>([])
        func add(_ event: MediaEvent, _ callID: String) { events.withLock { $0.append((event, callID)) } }
        func addTalkers(_ talkers: [String]) { talkerReports.withLock { $0.append(talkers) } }
        func events(of callID: String) -> [MediaEvent] { events.withLock { $0.filter { $0.callID == callID }.map(\.event) } }
        var talkers: [[String]] { talkerReports.withLock { $0 } }
    }

    @Test func aRoomOfFiveWakesItsLoopOnceAndMixesOncePerTickAndItsClockStopsWhenItCloses() throws {
        let scheduler = ManualScheduler()
        let loop = CountingMediaLoop(scheduler)
        let network = MemoryMediaNetwork()
        let ports = MemoryMediaPorts(network: network)
        let configuration = ServerHarness.configuration(directory: ServerHarness.temporaryDirectory()) {
            $0.conferenceLinger = .seconds(1)
        }
        let reports = Reports()
        let anchor = MediaAnchor(
            loop: scheduler, mediaLoops: [loop], stopMediaLoops: {}, ports: ports,
            configuration: configuration, certificate: try DTLSCertificate.generate(), log: ServerLog(level: .error) { _ in },
            metrics: ServerMetrics(), wallClockNanoseconds: { 1_800_000_000_000_000_000 },
            report: { event, callID in reports.add(event, callID) })
        anchor.talkersChanged = { _, talkers in reports.addTalkers(talkers) }
        let time = { ClockReading(instant: scheduler.now, unixMilliseconds: 1_800_000_000_000) }

        // Five participants join the room, each a device leg (full ICE, DTLS-SRTP, Opus)
        // sending a tone of its own.
        let seats = 5
        var devices: [(callID: String, device: Device)] = []
        for index in 0..<seats {
            let device = try Device(port: UInt16(5_000 + index), frequency: 300 + 150 * Double(index), network: network,
                                    now: scheduler.now, seed: UInt64(index + 1))
            let callID = "call-\(index)"
            anchor.perform(.joinRoom(callID: callID, offer: try device.core.makeOffer(), room: "standup"), applicationKey: "app", now: time())
            scheduler.run()
            guard case .callerLegReady(let answer)? = reports.events(of: callID).first else {
                Issue.record("no leg for \(callID): \(reports.events(of: callID))")
                return
            }
            try device.core.acceptAnswer(answer)
            device.carry(try device.core.start(now: scheduler.now))
            devices.append((callID, device))
        }

        /// `milliseconds` of virtual time in 1 ms steps, each device's audio every 20 ms.
        func run(milliseconds: Int) {
            for step in 1...milliseconds {
                scheduler.advance(by: .milliseconds(1))
                for (_, device) in devices { device.step(now: scheduler.now) }
                if step % 20 == 0 { for (_, device) in devices { device.audio(now: scheduler.now) } }
                scheduler.run()
            }
        }

        run(milliseconds: 2_000)
        for (callID, device) in devices {
            #expect(reports.events(of: callID).contains(.legConnected(.caller)), "\(callID): \(reports.events(of: callID))")
            #expect(device.states.last == .connected)
        }

        // One second in the steady state: 50 ticks, each one mix and one wake-up of the
        // room's timer, and the loop's timers scheduled and fired about once a tick, not
        // once per seat. Apart from the room's clock the loop runs only the legs' own
        // timers (RTCP, consent) and each call's once-a-second inactivity check: a few
        // per seat per second, bounded here by 3 per seat.
        guard let before = anchor.roomClock(applicationKey: "app", room: "standup") else {
            Issue.record("no room")
            return
        }
        let scheduledBefore = loop.scheduled.load(ordering: .relaxed)
        let firedBefore = loop.fired.load(ordering: .relaxed)
        run(milliseconds: 1_000)
        let after = try #require(anchor.roomClock(applicationKey: "app", room: "standup"))
        let ticks = Int(after.ticks - before.ticks)
        let scheduled = loop.scheduled.load(ordering: .relaxed) - scheduledBefore
        let fired = loop.fired.load(ordering: .relaxed) - firedBefore
        #expect(ticks == 50)
        #expect(after.mixes - before.mixes == after.ticks - before.ticks, "one mix per tick")
        #expect(after.wakeUps - before.wakeUps == after.ticks - before.ticks, "one wake-up of the room's timer per tick")
        #expect(after.armed)
        #expect(fired <= ticks + 3 * seats, "\(fired) timers fired for \(ticks) ticks of \(seats) seats")
        #expect(scheduled <= ticks + 3 * seats, "\(scheduled) timers scheduled for \(ticks) ticks of \(seats) seats")

        // Everyone heard the room: the talkers were reported (from the room's clock), each
        // report a change.
        for (callID, device) in devices {
            #expect(device.received.suffix(48_000).contains { abs(Int($0)) > 1_000 }, "\(callID) heard nothing")
        }
        let talkers = reports.talkers
        #expect(talkers.contains { !$0.isEmpty }, "no talkers reported: \(talkers)")
        #expect(zip(talkers, talkers.dropFirst()).allSatisfy { $0 != $1 }, "a report repeated: \(talkers)")

        // Everyone leaves: the lingering room has no timer (nobody is mixed), and once the
        // linger is over the room is gone and nothing of it fires again.
        for (callID, _) in devices { _ = anchor.closeAll(callID: callID, now: scheduler.now) }
        scheduler.run()
        let lingering = try #require(anchor.roomClock(applicationKey: "app", room: "standup"))
        #expect(!lingering.armed)
        scheduler.advance(by: .milliseconds(1_500))
        #expect(anchor.roomClock(applicationKey: "app", room: "standup") == nil)
        #expect(reports.talkers.last == [], "the closed room's talkers were not cleared")
        #expect(scheduler.pendingTimerCount == 0, "\(scheduler.pendingTimerCount) timers left")
        let firedAtClose = loop.fired.load(ordering: .relaxed)
        scheduler.advance(by: .seconds(2))
        #expect(loop.fired.load(ordering: .relaxed) == firedAtClose)
        #expect(ports.allocatedCount == 0)
        anchor.closeEverything()
    }
}
