import ParleyWireCore
import ParleyCallModel
import ParleyCallCore
import ParleyCrypto
import ParleyICECore
import ParleyMediaCore
import ParleyMediaLegCore
import ParleyNetCore
@testable import ParleyServer
import ParleySTUN
import ParleyTestSupport
import Synchronization
import Testing

/// The media anchor on a `ManualScheduler` with its sockets in memory: two device legs
/// (full ICE, DTLS-SRTP, Opus, on the same virtual clock) call each other through the
/// anchor's relay; ICE, the handshakes, the relay, the inactivity check and the close run
/// in virtual time, with no socket and no sleep. Audio is checked by tone both ways.
@Suite struct MediaAnchorVirtualTimeTests {
    /// A device's leg on the memory network, driven by the test.
    final class Device {
        var core: MediaLegCore
        let address: SocketAddress
        let network: MemoryMediaNetwork
        var tone: ToneGenerator
        var received: [Int16] = []
        var states: [MediaLegState] = []
        /// When false, what it sends is lost (its network went away).
        var online = true

        init(port: UInt16, frequency: Double, network: MemoryMediaNetwork, now: ContinuousClock.Instant, seed: UInt64) throws {
            address = .ipv4Loopback(port: port)
            self.network = network
            network.attachDevice(address)
            let ice = ICETransportAddress(ip: STUNIPAddress(bytes: address.hostBytes) ?? .ipv4(0), port: port)
            var configuration = MediaLegConfiguration(iceMode: .full, certificate: try DTLSCertificate.generate())
            configuration.codecs = [.opus]
            core = MediaLegCore(configuration: configuration, localAddresses: [ice],
                                now: ClockReading(instant: now, unixNanoseconds: 1_800_000_000_000_000_000), random: SeededGenerator(seed: seed))
            tone = ToneGenerator(frequency: frequency, amplitude: 0.3, sampleRate: 48_000)
        }

        func carry(_ actions: [MediaLegAction]) {
            for action in actions {
                switch action {
                case .send(let bytes, _, let to):
                    guard online, let destination = SocketAddress(hostBytes: to.ip.bytes, port: to.port) else { continue }
                    network.send(bytes, from: address, to: destination)
                case .stateChanged(let state):
                    states.append(state)
                default:
                    break
                }
            }
        }

        /// Takes what arrived and runs its timers.
        func step(now: ContinuousClock.Instant) {
            for datagram in network.takeDeviceInbox(address) {
                let from = ICETransportAddress(ip: STUNIPAddress(bytes: datagram.source.hostBytes) ?? .ipv4(0), port: datagram.source.port)
                let local = ICETransportAddress(ip: STUNIPAddress(bytes: address.hostBytes) ?? .ipv4(0), port: address.port)
                carry(core.receive(datagram.bytes, from: from, on: local, now: now))
            }
            if let deadline = core.nextDeadline, deadline <= now { carry(core.handleTimeout(now: now)) }
        }

        /// One 20 ms frame of its tone out, and what it plays.
        func audio(now: ContinuousClock.Instant) {
            if let actions = try? core.sendAudio(AudioFrame(samples: tone.next(count: 960), sampleRate: 48_000), now: now) {
                carry(actions)
            }
            received += core.playout(now: now)
        }
    }

    final class Reports: Sendable {
        private let events = Mutex<[MediaEvent]>([])
        func add(_ event: MediaEvent) { events.withLock { $0.append(event) } }
        var all: [MediaEvent] { events.withLock { $0 } }
    }

    @Test func aRelayedCallConnectsCarriesToneBothWaysAndEndsOnInactivityInVirtualTime() throws {
        let scheduler = ManualScheduler()
        let network = MemoryMediaNetwork()
        let ports = MemoryMediaPorts(network: network)
        let configuration = ServerHarness.configuration(directory: ServerHarness.temporaryDirectory()) {
            $0.mediaInactivityTimeout = .seconds(3)
        }
        let reports = Reports()
        let anchor = MediaAnchor(
            loop: scheduler, mediaLoops: [ManualMediaLoop(scheduler)], stopMediaLoops: {}, ports: ports,
            configuration: configuration, certificate: try DTLSCertificate.generate(), log: ServerLog(level: .error) { _ in },
            metrics: ServerMetrics(), wallClockNanoseconds: { 1_800_000_000_000_000_000 },
            report: { event, _ in reports.add(event) })
        let start = scheduler.now
        let caller = try Device(port: 5_000, frequency: 440, network: network, now: start, seed: 1)
        let callee = try Device(port: 6_000, frequency: 1_000, network: network, now: start, seed: 2)
        let bob = Party.device(ParleyCallCore.Device(user: AppUser(applicationKey: "app", userID: "bob"), deviceID: "phone"))
        var generator = SeededGenerator(seed: 7)
        let callID = CallID.random(using: &generator)
        let time = { ClockReading(instant: scheduler.now, unixMilliseconds: 1_800_000_000_000) }

        // The engine's instructions, in the order the call state machine gives them.
        anchor.perform(.answerCaller(callID: callID, offer: try caller.core.makeOffer(), topology: .relay), applicationKey: "app", now: time())
        scheduler.run()
        guard case .callerLegReady(let callerAnswer)? = reports.all.first else {
            Issue.record("no caller leg: \(reports.all)")
            return
        }
        try caller.core.acceptAnswer(callerAnswer)
        anchor.perform(.offerCallee(callID: callID, party: bob), applicationKey: "app", now: time())
        scheduler.run()
        guard case .calleeLegReady(bob, let calleeOffer)? = reports.all.last else {
            Issue.record("no callee leg: \(reports.all)")
            return
        }
        let calleeAnswer = try callee.core.answer(offer: calleeOffer)
        anchor.perform(.acceptAnswer(callID: callID, party: bob, answer: calleeAnswer), applicationKey: "app", now: time())
        anchor.perform(.bridge(callID: callID, party: bob), applicationKey: "app", now: time())
        scheduler.run()
        caller.carry(try caller.core.start(now: scheduler.now))
        callee.carry(try callee.core.start(now: scheduler.now))

        // Three seconds of virtual time in 1 ms steps, audio every 20 ms.
        for step in 1...3_000 {
            scheduler.advance(by: .milliseconds(1))
            caller.step(now: scheduler.now)
            callee.step(now: scheduler.now)
            if step % 20 == 0 {
                caller.audio(now: scheduler.now)
                callee.audio(now: scheduler.now)
            }
            scheduler.run()
        }
        #expect(reports.all.contains(.legConnected(.caller)))
        #expect(reports.all.contains(.legConnected(.callee(bob))))
        #expect(caller.states.last == .connected)
        #expect(callee.states.last == .connected)
        let heardByCallee = FrequencyAnalysis.dominantFrequency(samples: Array(callee.received.suffix(48_000)), sampleRate: 48_000)
        let heardByCaller = FrequencyAnalysis.dominantFrequency(samples: Array(caller.received.suffix(48_000)), sampleRate: 48_000)
        #expect(abs((heardByCallee ?? 0) - 440) < 15, "the callee heard \(heardByCallee as Any) Hz")
        #expect(abs((heardByCaller ?? 0) - 1_000) < 15, "the caller heard \(heardByCaller as Any) Hz")
        #expect(start.duration(to: scheduler.now) == .seconds(3))

        // The caller's network goes away: the inactivity check (every 0.75 s here) reports
        // its leg 3 s after its last packet, in virtual time. The callee, still talking,
        // is not reported: its consent checks come every 4-6 s (RFC 7675), and the anchor's
        // consent expiry is never shorter than 8 s whatever the media timeout.
        caller.online = false
        let silentAt = scheduler.now
        var reportedAt: ContinuousClock.Instant?
        for step in 1...10_000 where reportedAt == nil {
            scheduler.advance(by: .milliseconds(1))
            callee.step(now: scheduler.now)
            if step % 20 == 0 { callee.audio(now: scheduler.now) }
            scheduler.run()
            if reports.all.contains(.legInactive(.caller)) {
                reportedAt = scheduler.now
            }
        }
        let quiet = reportedAt.map { silentAt.duration(to: $0) }
        #expect(quiet.map { $0 >= .seconds(3) && $0 <= .milliseconds(3_800) } == true, "reported after \(quiet as Any): \(reports.all.suffix(2))")

        // Ten seconds more of the callee talking alone: its leg stays up.
        for step in 1...10_000 {
            scheduler.advance(by: .milliseconds(1))
            callee.step(now: scheduler.now)
            if step % 20 == 0 { callee.audio(now: scheduler.now) }
            scheduler.run()
        }
        #expect(!reports.all.contains { if case .legFailed(.callee, _) = $0 { true } else { $0 == .legInactive(.callee(bob)) } },
                "\(reports.all)")

        // The close returns both legs' figures and gives every port back.
        let statistics = anchor.closeAll(callID: callID, now: scheduler.now)
        #expect((statistics[.caller]?.rtp.packetsReceived ?? 0) > 100)
        #expect((statistics[.callee(bob)]?.rtp.packetsReceived ?? 0) > 100)
        #expect(ports.allocatedCount == 0)
        anchor.closeEverything()
    }
}
