import Foundation
import Glibc
import ParleyICECore
import ParleyMediaLegCore
import ParleyNetCore
import ParleyNetLinux
import ParleySTUN
import ParleyWireCore

/// parleyd's conference room as the `conference` group runs it: the product's
/// `ConferenceMixer<String>` on one media loop (`EventLoop`), each participant a
/// `MediaLegCore` on a UDP socket of its own, driven the way parleyd's media anchor drives
/// a room (MediaAnchor.swift and RoomSeat.swift): each socket watched on the loop and read
/// in batches of 16 (8 batches a wake-up at most), every datagram handed to the mixer,
/// the actions performed (sends from the leg's socket), and after every wake-up the
/// participant's leg timer (its own ICE, DTLS and RTCP deadlines) and the room's one
/// clock moved. The room has one timer, at the mixer's `nextTopologyDeadline` (the
/// anchor's `RoomMedia.rescheduleClock`): it runs each tick once for the room
/// (`handleTopologyTimeout`), every participant's actions are performed and its leg timer
/// moved, as the anchor's `RoomMedia.onTick` and `deliver` do. ParleyBench does not link
/// ParleyServer, so this mirrors the anchor's structure rather than calling it.
///
/// The host also counts what the room costs its loop (`Report`): wake-ups by kind, the
/// datagrams each receive wake-up found, the loop thread's CPU and the part of it the
/// ticks took, and the thread's context switches (`getrusage(RUSAGE_THREAD)`).
///
/// The legs are plain RTP, configured as the anchor configures a SIP party's leg
/// (`MediaLegConfiguration(plainRTP:)`, G.711 and Opus offered, no RED) in a room call
/// (the room's Opus complexity, given to `openRoom`), and negotiated by
/// SDP: each answers an offer made for the participant's socket (a plain-RTP Opus stream
/// at that address), so the generator's RTP latches the leg and the mix goes back there.
/// What parleyd adds around a room and this leaves out: signaling, the call records, ICE
/// and DTLS-SRTP (an app's legs have them; the load's plain-RTP participants have none,
/// as Janus's have none), the port pool (sockets bind port 0 on 127.0.0.1) and the
/// anchor's once-a-second inactivity check and packet counters.
///
/// Threads: the room lives on `loop`; the methods hop there and wait.
final class ConferenceRoomHost: @unchecked Sendable {
    // @unchecked: `room` is used on `loop`'s thread only.

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// What the room counted, as `counters` prints it.
    struct Report: Codable, Sendable {
        var participants: Int
        /// The room's rate.
        var sampleRate: Int
        /// The libopus complexities the legs' encoders run at (each once, ascending): the
        /// one the room was opened with when every leg took it.
        var opusComplexities: [Int]
        var ticks: UInt64
        /// Ticks run later than the mixer's threshold (5 ms) after their deadline.
        var lateTicks: UInt64
        /// Ticks given up after a stall.
        var skippedTicks: UInt64
        /// Tick lateness over the mixer's kept runs (its last 1024 ticks), milliseconds.
        var latenessP50Milliseconds: Double
        var latenessP99Milliseconds: Double
        var latenessMaximumMilliseconds: Double
        var latenessRuns: UInt64
        var sharedEncodes: UInt64
        var talkerEncodes: UInt64
        var holdEncodes: UInt64
        var sharedFramesSent: UInt64
        var encodeFailures: UInt64
        var datagramsDropped: UInt64
        /// Talkers now.
        var talkers: Int
        /// RTP packets the legs received and sent (their statistics).
        var packetsReceived: UInt64
        var packetsSent: UInt64
        /// The room's handlers the loop ran since the room opened: a socket's readiness
        /// (one epoll wake-up may run several), the room's clock, a leg's own timer.
        var receiveWakeUps: UInt64
        var clockWakeUps: UInt64
        var legTimerWakeUps: UInt64
        /// Datagrams read from the legs' sockets.
        var datagramsRead: UInt64
        /// The loop thread's CPU since the room opened (`CLOCK_THREAD_CPUTIME_ID`), and the
        /// part spent in the room's ticks (mix, encodes, sends), seconds.
        var loopCPUSeconds: Double
        var tickCPUSeconds: Double
        /// Wall time in the receive handlers (read, decode-side work, sends), seconds.
        var receiveSeconds: Double
        /// The loop thread's voluntary context switches (sleeps in `epoll_wait` that
        /// blocked) and involuntary ones (preempted) since the room opened.
        var voluntarySwitches: Int
        var involuntarySwitches: Int

        /// Shared and N-1 encodes per tick, averaged over the room's ticks.
        var sharedEncodesPerTick: Double { ticks > 0 ? Double(sharedEncodes) / Double(ticks) : 0 }
        var talkerEncodesPerTick: Double { ticks > 0 ? Double(talkerEncodes) / Double(ticks) : 0 }
        /// Every handler run of the loop for the room, per tick.
        var wakeUpsPerTick: Double {
            ticks > 0 ? Double(receiveWakeUps + clockWakeUps + legTimerWakeUps) / Double(ticks) : 0
        }
        /// Datagrams each socket handler run found, on average.
        var datagramsPerReceiveWakeUp: Double { receiveWakeUps > 0 ? Double(datagramsRead) / Double(receiveWakeUps) : 0 }
    }

    /// One participant: its leg's socket and its leg's own timer (the anchor's `CallMedia`
    /// of a room call and its `AnchoredLeg`); the room's clock is the room's.
    private final class Seat: @unchecked Sendable {
        // @unchecked: used on the room's loop only.
        let id: String
        let socket: UDPSocket
        let local: ICETransportAddress
        var legTimer: (id: TimerID, at: ContinuousClock.Instant)?
        var registered = false
        var failed = false
        /// The socket address of the leg's last destination.
        private var lastDestination: (ice: ICETransportAddress, socket: SocketAddress)?

        init(id: String, socket: UDPSocket) {
            self.id = id
            self.socket = socket
            local = Seat.iceAddress(socket.localAddress)
        }

        func destination(_ to: ICETransportAddress) -> SocketAddress? {
            if let last = lastDestination, last.ice == to { return last.socket }
            guard let address = SocketAddress(hostBytes: to.ip.bytes, port: to.port) else { return nil }
            lastDestination = (to, address)
            return address
        }

        static func iceAddress(_ address: SocketAddress) -> ICETransportAddress {
            ICETransportAddress(ip: STUNIPAddress(bytes: address.hostBytes) ?? .ipv4(0), port: address.port)
        }
    }

    /// The open room (loop only).
    private final class Room: @unchecked Sendable {
        // @unchecked: used on the room's loop only.
        let mixer: ConferenceMixer<String>
        var seats: [String: Seat] = [:]
        /// Seats in the order they joined.
        var order: [Seat] = []
        /// The room's one timer, at the mixer's next tick (the anchor's `RoomMedia.clock`).
        var clock: (id: TimerID, at: ContinuousClock.Instant)?
        var receiveWakeUps: UInt64 = 0
        var clockWakeUps: UInt64 = 0
        var legTimerWakeUps: UInt64 = 0
        var datagramsRead: UInt64 = 0
        var tickCPU: Duration = .zero
        var receiveTime: Duration = .zero
        /// The loop thread's CPU and context switches when the room opened.
        let openedCPU: Duration
        let openedSwitches: (voluntary: Int, involuntary: Int)

        init(mixer: ConferenceMixer<String>) {
            self.mixer = mixer
            openedCPU = ConferenceRoomHost.threadCPU()
            openedSwitches = ConferenceRoomHost.threadSwitches()
        }
    }

    static let maximumParticipants = ConferenceLoadGenerator.maximumParticipants

    let loop: EventLoop
    /// The loop's receive batch and the buffer a datagram is handed over in (the anchor's
    /// `MediaLoopBuffers`).
    private let batch = UDPReceiveBatch(capacity: 16, slotSize: 2048)
    private let work = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048 + 64, alignment: 16)
    private var room: Room?

    init() throws {
        do { loop = try EventLoop(name: "parley-media-1") } catch { throw Failure(description: "cannot start the media loop: \(error)") }
        // libsrtp's self-tests at start-up, as the anchor runs them (plain legs use none).
        MediaLegCore.prepareProcess()
    }

    deinit { work.deallocate() }

    /// Opens a room mixing at `sampleRate` with one plain-RTP leg per address in
    /// `participants` (where that participant receives its mix and sends from), their Opus
    /// encoders at libopus complexity `opusComplexity` (0...10, parleyd's
    /// `--conference-opus-complexity`); per participant, where its leg receives. One room
    /// at a time.
    func openRoom(participants: [SocketAddress], sampleRate: Int, opusComplexity: Int) throws -> [SocketAddress] {
        guard (0...10).contains(opusComplexity) else {
            throw Failure(description: "an Opus complexity of \(opusComplexity): it is 0 to 10")
        }
        guard (1...Self.maximumParticipants).contains(participants.count) else {
            throw Failure(description: "\(participants.count) participants: a room here takes 1 to \(Self.maximumParticipants)")
        }
        let result: Result<[SocketAddress], Failure>? = loop.runAndWait { [self] in
            do { return .success(try open(participants, sampleRate: sampleRate, opusComplexity: opusComplexity)) } catch let error as Failure {
                return .failure(error)
            } catch {
                return .failure(Failure(description: "\(error)"))
            }
        }
        guard let result else { throw Failure(description: "the media loop stopped") }
        return try result.get()
    }

    /// What the open room counted; nil when none is open.
    func report() -> Report? {
        loop.runAndWait { [self] () -> Report? in
            guard let room else { return nil }
            let mixer = room.mixer
            var received: UInt64 = 0, sent: UInt64 = 0
            var complexities: Set<Int> = []
            for seat in room.order {
                guard let leg = mixer.withLeg(seat.id, { (core: inout MediaLegCore) in
                    (statistics: core.statistics, encoder: core.encoderConfiguration)
                }) else { continue }
                received &+= leg.statistics.rtp.packetsReceived
                sent &+= leg.statistics.rtp.packetsSent
                if let complexity = leg.encoder?.opus?.complexity { complexities.insert(complexity) }
            }
            let counters = mixer.counters
            func milliseconds(_ duration: Duration) -> Double { Double(duration.wholeNanoseconds) / 1e6 }
            let switches = Self.threadSwitches()
            return Report(
                participants: room.order.count, sampleRate: mixer.configuration.mixer.sampleRate,
                opusComplexities: complexities.sorted(), ticks: counters.ticks,
                lateTicks: counters.lateTicks, skippedTicks: mixer.skippedTicks,
                latenessP50Milliseconds: milliseconds(mixer.lateness.percentile(0.5)),
                latenessP99Milliseconds: milliseconds(mixer.lateness.percentile(0.99)),
                latenessMaximumMilliseconds: milliseconds(mixer.lateness.maximum), latenessRuns: mixer.lateness.count,
                sharedEncodes: counters.sharedEncodes, talkerEncodes: counters.talkerEncodes, holdEncodes: counters.holdEncodes,
                sharedFramesSent: counters.sharedFramesSent, encodeFailures: counters.encodeFailures,
                datagramsDropped: counters.datagramsDropped, talkers: mixer.talkers.count, packetsReceived: received, packetsSent: sent,
                receiveWakeUps: room.receiveWakeUps, clockWakeUps: room.clockWakeUps, legTimerWakeUps: room.legTimerWakeUps,
                datagramsRead: room.datagramsRead, loopCPUSeconds: milliseconds(Self.threadCPU() - room.openedCPU) / 1e3,
                tickCPUSeconds: milliseconds(room.tickCPU) / 1e3, receiveSeconds: milliseconds(room.receiveTime) / 1e3,
                voluntarySwitches: switches.voluntary - room.openedSwitches.voluntary,
                involuntarySwitches: switches.involuntary - room.openedSwitches.involuntary)
        } ?? nil
    }

    /// Closes the open room: every leg's goodbye is sent, its timers stopped and its
    /// socket closed.
    func closeRoom() {
        _ = loop.runAndWait { [self] in
            guard let room else { return }
            self.room = nil
            let now = loop.now
            for seat in room.order {
                if let removed = room.mixer.remove(seat.id, now: now) { perform(removed.actions, in: room) }
                stopTimers(of: seat)
                if seat.registered { loop.deregister(seat.socket); seat.registered = false }
                seat.socket.close()
            }
            // The last leg out stopped the mixer's clock; the room's timer goes with it.
            if let clock = room.clock { _ = loop.cancel(clock.id) }
            room.clock = nil
        }
    }

    /// Closes the room and stops the loop.
    func stop() {
        closeRoom()
        loop.shutdown()
    }

    // MARK: On the loop

    private func open(_ participants: [SocketAddress], sampleRate: Int, opusComplexity: Int) throws -> [SocketAddress] {
        guard room == nil else { throw Failure(description: "a room is open already") }
        var configuration = ConferenceMixer<String>.Configuration()
        configuration.mixer.sampleRate = sampleRate
        configuration.maximumParticipants = max(configuration.maximumParticipants, participants.count)
        let mixer: ConferenceMixer<String>
        do { mixer = try ConferenceMixer<String>(configuration: configuration) } catch {
            throw Failure(description: "the room's mixer: \(error)")
        }
        let room = Room(mixer: mixer)
        self.room = room
        do {
            for (index, participant) in participants.enumerated() {
                try seat("participant-\(index)", at: participant, opusComplexity: opusComplexity, in: room)
            }
        } catch {
            closeRoom()
            throw error
        }
        return room.order.map(\.socket.localAddress)
    }

    /// One participant's leg, as the anchor opens a room call's: socket and core, watched,
    /// added to the mixer, its answer to the participant's offer, started and joined.
    private func seat(_ id: String, at participant: SocketAddress, opusComplexity: Int, in room: Room) throws {
        let socket: UDPSocket
        do { socket = try UDPSocket(bindingTo: .ipv4Loopback(port: 0)) } catch {
            throw Failure(description: "no media socket: \(error)")
        }
        let seat = Seat(id: id, socket: socket)
        let clock = SystemClock.now()
        // A SIP party's leg in the anchor: plain RTP (no SDES here: the load is in the
        // clear), G.711 first and Opus, no RED.
        var configuration = MediaLegConfiguration(plainRTP: PlainRTPTransport.Options(offersSDES: false))
        configuration.codecs = [.pcmu, .pcma, .opus]
        configuration.opusRedundancy = false
        // The anchor gives a room call's leg `ServerConfiguration.conferenceOpusComplexity`.
        configuration.opusComplexity = opusComplexity
        configuration.mediaMode = room.mixer.mediaMode(for: id)
        var core = MediaLegCore(configuration: configuration, localAddresses: [seat.local], now: clock,
                                random: SystemRandomNumberGenerator())
        do {
            let answer = try core.answer(offer: try Self.participantOffer(at: participant, now: clock))
            guard core.encoderConfiguration?.kind == .opus else {
                throw Failure(description: "the leg did not agree on Opus: \(answer)")
            }
        } catch let error as Failure {
            socket.close()
            throw error
        } catch {
            socket.close()
            throw Failure(description: "offer/answer with participant \(participant): \(error)")
        }
        do {
            try loop.register(socket, closeOnShutdown: true, onReadable: { [weak self, weak seat] in
                guard let self, let seat else { return }
                self.readable(seat)
            })
            seat.registered = true
        } catch {
            socket.close()
            throw Failure(description: "cannot watch \(socket.localAddress): \(error)")
        }
        room.mixer.add(id, core: core)
        room.seats[id] = seat
        room.order.append(seat)
        do {
            perform(try room.mixer.start(id, now: loop.now), in: room)
            try room.mixer.join(id)
        } catch {
            throw Failure(description: "cannot start or join \(id): \(error)")
        }
        rescheduleLeg(seat, in: room)
        rescheduleClock(of: room)
    }

    /// The offer of a participant that sends and receives plain-RTP Opus at `address`
    /// (what the load generator does), made by a stand-in leg there.
    static func participantOffer(at address: SocketAddress, now: ClockReading) throws -> String {
        var configuration = MediaLegConfiguration(plainRTP: PlainRTPTransport.Options())
        configuration.codecs = [.opus]
        configuration.opusRedundancy = false
        var standIn = MediaLegCore(configuration: configuration, localAddresses: [Seat.iceAddress(address)], now: now,
                                   random: SystemRandomNumberGenerator())
        return try standIn.makeOffer()
    }

    private func readable(_ seat: Seat) {
        guard let room, room.seats[seat.id] === seat else { return }
        let start = loop.now
        room.receiveWakeUps &+= 1
        defer { room.receiveTime += start.duration(to: loop.now) }
        for _ in 0..<8 {  // bounded per wake-up so the other legs on the loop get their turn
            let count: Int
            do { count = try seat.socket.receive(into: batch) } catch { return }
            if count == 0 { break }
            room.datagramsRead &+= UInt64(count)
            let now = loop.now
            for index in 0..<count {
                let payload = batch.payload(at: index)
                work.copyMemory(from: payload)
                let from = Seat.iceAddress(batch.source(at: index))
                let receipt = room.mixer.receive(buffer: work, length: payload.count, from: from, on: seat.id, local: seat.local, now: now)
                perform(receipt.actions, in: room)
            }
            if count < batch.capacity { break }
        }
        rescheduleLeg(seat, in: room)
        rescheduleClock(of: room)
    }

    /// Performs the mixer's actions. The anchor hands them to each participant's call in
    /// turn, which then moves its leg's timer; here every seat is on the same loop, so they
    /// go out in one pass and every seat they touched has its leg's timer moved, the same
    /// work. The room's clock is moved by whoever called into the mixer.
    private func perform(_ actions: [MediaTopologyAction<String>], in room: Room) {
        guard !actions.isEmpty else { return }
        var touched: [ObjectIdentifier: Seat] = [:]
        for action in actions {
            switch action {
            case .send(let id, let bytes, _, let to):
                guard let seat = room.seats[id], let destination = seat.destination(to) else { continue }
                _ = try? seat.socket.send(bytes, to: destination)
                touched[ObjectIdentifier(seat)] = seat
            case .stateChanged(let id, let state):
                if state == .failed || state == .closed, let seat = room.seats[id] { seat.failed = true }
            default:
                break
            }
        }
        for seat in touched.values { rescheduleLeg(seat, in: room) }
    }

    /// The anchor's `RoomMedia.rescheduleClock`: the room's one timer kept at the mixer's
    /// next tick; one comparison when it did not move.
    private func rescheduleClock(of room: Room) {
        let next = room.mixer.nextTopologyDeadline
        if let timer = room.clock {
            if timer.at == next { return }
            _ = loop.cancel(timer.id)
            room.clock = nil
        }
        guard let next else { return }
        let id = loop.schedule(at: next) { [weak self, weak room] in
            guard let self, let room, self.room === room else { return }
            room.clock = nil
            room.clockWakeUps &+= 1
            let cpu = Self.threadCPU()
            self.perform(room.mixer.handleTopologyTimeout(now: self.loop.now), in: room)
            room.tickCPU += Self.threadCPU() - cpu
            self.rescheduleClock(of: room)
        }
        room.clock = (id, next)
    }

    private func rescheduleLeg(_ seat: Seat, in room: Room) {
        guard let next = room.mixer.nextDeadline(of: seat.id), seat.registered else {
            if let timer = seat.legTimer { _ = loop.cancel(timer.id); seat.legTimer = nil }
            return
        }
        if let timer = seat.legTimer {
            if timer.at == next { return }
            _ = loop.cancel(timer.id)
        }
        let id = loop.schedule(at: next) { [weak self, weak seat] in
            guard let self, let seat, let room = self.room, room.seats[seat.id] === seat else { return }
            seat.legTimer = nil
            room.legTimerWakeUps &+= 1
            self.perform(room.mixer.handleTimeout(of: seat.id, now: self.loop.now), in: room)
            self.rescheduleLeg(seat, in: room)
            self.rescheduleClock(of: room)
        }
        seat.legTimer = (id, next)
    }

    private func stopTimers(of seat: Seat) {
        if let timer = seat.legTimer { _ = loop.cancel(timer.id) }
        seat.legTimer = nil
    }

    /// The calling thread's CPU time (user and system).
    static func threadCPU() -> Duration {
        var time = timespec()
        guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time) == 0 else { return .zero }
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }

    /// The calling thread's voluntary and involuntary context switches so far.
    static func threadSwitches() -> (voluntary: Int, involuntary: Int) {
        var usage = rusage()
        // RUSAGE_THREAD (Linux, 1) is behind _GNU_SOURCE, which the Glibc module does not set.
        guard getrusage(1, &usage) == 0 else { return (0, 0) }
        return (usage.ru_nvcsw, usage.ru_nivcsw)
    }
}
