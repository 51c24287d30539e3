import ParleyWireCore
import ParleyCrypto
import ParleyICECore
import ParleyMediaCore
@testable import ParleyMediaLegCore
import ParleySTUN
import ParleyTestSupport

/// Two sans-I/O legs wired through an in-memory network on a virtual clock: datagrams
/// are delivered after `latency`, optionally dropped or mangled by `filter`.
struct LegPairHarness: ~Copyable {
    var offerer: MediaLegCore
    var answerer: MediaLegCore
    let offererAddress: ICETransportAddress
    let answererAddress: ICETransportAddress
    let start: ContinuousClock.Instant
    var now: ContinuousClock.Instant
    var inFlight: [(due: ContinuousClock.Instant, bytes: [UInt8], from: ICETransportAddress, to: ICETransportAddress)] = []
    var events: [(side: String, action: MediaLegAction)] = []
    var latency: Duration = .milliseconds(5)
    /// Returns nil to drop a datagram, or the bytes to deliver.
    var filter: ((_ bytes: [UInt8], _ from: ICETransportAddress, _ to: ICETransportAddress) -> [UInt8]?)?
    /// Every datagram a side sent, when `recordSends` is on.
    var recordSends = false
    var sent: [(side: String, bytes: [UInt8])] = []
    var offererReceived: [Int16] = []
    var answererReceived: [Int16] = []
    /// The offerer behind a NAT: what it sends leaves from `outside`, what is sent to
    /// `outside` reaches it, and nothing sent to its own address gets through.
    var nat: (outside: ICETransportAddress, unreachableDrops: Int)?
    var offererTone = ToneGenerator(frequency: 440, amplitude: 0.3, sampleRate: 48_000)
    var answererTone = ToneGenerator(frequency: 1000, amplitude: 0.3, sampleRate: 48_000)

    init(offererConfiguration: MediaLegConfiguration, answererConfiguration: MediaLegConfiguration, seed: UInt64 = 1) throws {
        offererAddress = ICETransportAddress(ip: .ipv4(0x7F00_0001), port: 40_000)
        answererAddress = ICETransportAddress(ip: .ipv4(0x7F00_0001), port: 50_000)
        start = ContinuousClock.now
        now = start
        offerer = MediaLegCore(configuration: offererConfiguration, localAddresses: [offererAddress], now: ClockReading(instant: start, unixNanoseconds: 1_800_000_000_000_000_000), random: SeededGenerator(seed: seed))
        answerer = MediaLegCore(configuration: answererConfiguration, localAddresses: [answererAddress], now: ClockReading(instant: start, unixNanoseconds: 1_800_000_000_000_000_000), random: SeededGenerator(seed: seed + 1))
    }

    static func configuration(_ mode: MediaLegConfiguration.ICEMode, certificate: DTLSCertificate? = nil) throws -> MediaLegConfiguration {
        MediaLegConfiguration(iceMode: mode, certificate: try certificate ?? DTLSCertificate.generate())
    }

    mutating func negotiate() throws {
        let offer = try offerer.makeOffer()
        let answer = try answerer.answer(offer: offer)
        try offerer.acceptAnswer(answer)
    }

    mutating func startBoth() throws {
        queue(try offerer.start(now: now), side: "offerer")
        queue(try answerer.start(now: now), side: "answerer")
    }

    mutating func queue(_ actions: [MediaLegAction], side: String) {
        for action in actions {
            if case .send(let bytes, var from, let to) = action {
                if let nat, from == offererAddress { from = nat.outside }
                inFlight.append((now + latency, bytes, from, to))
                if recordSends { sent.append((side, bytes)) }
            } else {
                events.append((side, action))
            }
        }
    }

    /// Injects a datagram as if `from` had sent it to `to`.
    mutating func inject(_ bytes: [UInt8], from: ICETransportAddress, to: ICETransportAddress) {
        inFlight.append((now, bytes, from, to))
    }

    /// Runs the virtual clock for `duration` in 1 ms steps; audio moves every 20 ms when
    /// `audio` is on.
    mutating func run(for duration: Duration, audio: Bool = false) {
        let end = now + duration
        var step = 0
        while now < end {
            now = now + .milliseconds(1)
            step += 1
            deliverDue()
            if let deadline = offerer.nextDeadline, deadline <= now { queue(offerer.handleTimeout(now: now), side: "offerer") }
            if let deadline = answerer.nextDeadline, deadline <= now { queue(answerer.handleTimeout(now: now), side: "answerer") }
            if audio, step % 20 == 0 {
                let a = AudioFrame(samples: offererTone.next(count: 960), sampleRate: 48_000)
                let b = AudioFrame(samples: answererTone.next(count: 960), sampleRate: 48_000)
                if let actions = try? offerer.sendAudio(a, now: now) { queue(actions, side: "offerer") }
                if let actions = try? answerer.sendAudio(b, now: now) { queue(actions, side: "answerer") }
                offererReceived += offerer.playout(now: now)
                answererReceived += answerer.playout(now: now)
            }
        }
    }

    private mutating func deliverDue() {
        var rounds = 0
        while rounds < 1000, let index = inFlight.firstIndex(where: { $0.due <= now }) {
            rounds += 1
            let item = inFlight.remove(at: index)
            var bytes = item.bytes
            if let filter {
                guard let kept = filter(bytes, item.from, item.to) else { continue }
                bytes = kept
            }
            if item.to == answererAddress {
                queue(answerer.receive(bytes, from: item.from, on: item.to, now: now), side: "answerer")
            } else if let outside = nat?.outside, item.to == outside {
                queue(offerer.receive(bytes, from: item.from, on: offererAddress, now: now), side: "offerer")
            } else if nat != nil, item.to == offererAddress {
                nat?.unreachableDrops += 1
            } else if item.to == offererAddress {
                queue(offerer.receive(bytes, from: item.from, on: item.to, now: now), side: "offerer")
            }
        }
    }

    func states(_ side: String) -> [MediaLegState] {
        events.compactMap { event in
            guard event.side == side, case .stateChanged(let state) = event.action else { return nil }
            return state
        }
    }

    func drops(_ side: String) -> [(MediaLegDropReason, String)] {
        events.compactMap { event in
            guard event.side == side, case .dropped(let reason, _, let detail) = event.action else { return nil }
            return (reason, detail)
        }
    }
}
