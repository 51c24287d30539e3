import ParleyICECore
import ParleyMediaCore
import ParleyMediaLegCore
import ParleyRTP
import ParleySDP
import ParleyTestSupport
import ParleyWireCore

/// A conference room on a virtual clock, no sockets: each participant is a real
/// `MediaLegCore` (plain RTP, Opus or G.711, as a SIP phone or a softphone would run it)
/// whose server leg sits in one `ConferenceMixer`. Datagrams take 2 ms; every 20 ms each
/// participant sends a frame of its tone (or silence) and plays 20 ms of what it receives.
final class ConferenceHarness {
    final class Participant {
        let id: Int
        var core: MediaLegCore
        let address: ICETransportAddress
        let serverAddress: ICETransportAddress
        /// What it sends; nil sends silence.
        var tone: ToneGenerator?
        var heard: [Int16] = []
        /// The RTP it received, with the tick of the room it arrived in.
        var received: [(at: Int, packet: RTPPacket)] = []

        init(id: Int, core: consuming MediaLegCore, address: ICETransportAddress, serverAddress: ICETransportAddress) {
            self.id = id
            self.core = core
            self.address = address
            self.serverAddress = serverAddress
        }

        /// The payloads of the audio packets it received, in order.
        var audioPayloads: [[UInt8]] { received.map { Array($0.packet.payload) } }
    }

    let start = ContinuousClock.now
    var now: ContinuousClock.Instant
    let mixer: ConferenceMixer<Int>
    var participants: [Participant] = []
    var inFlight: [(due: ContinuousClock.Instant, bytes: [UInt8], from: ICETransportAddress, to: ICETransportAddress)] = []
    var topologyActions: [MediaTopologyAction<Int>] = []
    /// The room's encodes after each tick it ran.
    var encodes: [ConferenceMixer<Int>.TickEncodes] = []
    var elapsedMilliseconds = 0
    /// The audio rate of the room's legs (`MediaLegConfiguration.audioRate`).
    let legAudioRate: Int
    private let wallClock: ClockReading

    static func address(_ port: UInt16) -> ICETransportAddress { ICETransportAddress(ip: .ipv4(0x7F00_0001), port: port) }

    /// - Parameters:
    ///   - codecs: each participant's codec (what its phone offers).
    ///   - tones: each participant's tone frequency, nil for silence (amplitude `amplitude`).
    ///   - legAudioRate: the room's legs' audio rate; nil runs them at the room's rate, as
    ///     parleyd does.
    init(codecs: [AudioCodec], tones: [Double?], amplitude: Double = 0.1,
         configuration: ConferenceMixer<Int>.Configuration = .init(), legAudioRate: Int? = nil) throws {
        now = start
        self.legAudioRate = legAudioRate ?? configuration.mixer.sampleRate
        wallClock = ClockReading(instant: start, unixNanoseconds: 1_800_000_000_000_000_000)
        mixer = try ConferenceMixer(configuration: configuration)
        for (index, codec) in codecs.enumerated() {
            try addParticipant(codec: codec, tone: tones[index], amplitude: amplitude)
        }
    }

    /// Adds a participant, negotiates, starts and joins its leg (its Opus encoder at
    /// `opusComplexity`).
    @discardableResult
    func addParticipant(codec: AudioCodec, tone: Double?, amplitude: Double = 0.1, opusComplexity: Int = 9) throws -> Participant {
        let id = participants.count
        let address = Self.address(UInt16(10_000 + 2 * id))
        let serverAddress = Self.address(UInt16(20_000 + 2 * id))
        var phoneConfiguration = MediaLegConfiguration(plainRTP: .init())
        phoneConfiguration.codecs = [codec]
        var legConfiguration = MediaLegConfiguration(plainRTP: .init())
        legConfiguration.mediaMode = mixer.mediaMode(for: id)
        legConfiguration.opusComplexity = opusComplexity
        legConfiguration.audioRate = legAudioRate
        var phone = MediaLegCore(configuration: phoneConfiguration, localAddresses: [address], now: wallClock,
                                 random: SeededGenerator(seed: 100 + UInt64(id)))
        var leg = MediaLegCore(configuration: legConfiguration, localAddresses: [serverAddress], now: wallClock,
                               random: SeededGenerator(seed: 200 + UInt64(id)))
        try phone.acceptAnswer(try leg.answer(offer: try phone.makeOffer()))
        mixer.add(id, core: leg)
        let participant = Participant(id: id, core: phone, address: address, serverAddress: serverAddress)
        if let tone { participant.tone = ToneGenerator(frequency: tone, amplitude: amplitude, sampleRate: 48_000) }
        participants.append(participant)
        perform(try mixer.start(id, now: now))
        carry(try participant.core.start(now: now), from: participant)
        try mixer.join(id)
        return participant
    }

    func carry(_ actions: [MediaLegAction], from participant: Participant) {
        for case .send(let bytes, let from, let to) in actions { inFlight.append((now + .milliseconds(2), bytes, from, to)) }
    }

    func perform(_ actions: [MediaTopologyAction<Int>]) {
        topologyActions += actions
        for case .send(_, let bytes, let from, let to) in actions { inFlight.append((now + .milliseconds(2), bytes, from, to)) }
    }

    /// Runs `milliseconds` of virtual time in 1 ms steps.
    func run(milliseconds: Int) throws {
        for _ in 0..<milliseconds {
            now = now + .milliseconds(1)
            elapsedMilliseconds += 1
            deliverDue()
            for leg in mixer.legIDs {
                if let deadline = mixer.nextDeadline(of: leg), deadline <= now { perform(mixer.handleTimeout(of: leg, now: now)) }
            }
            if let deadline = mixer.nextTopologyDeadline, deadline <= now {
                let ticks = mixer.counters.ticks
                perform(mixer.handleTopologyTimeout(now: now))
                if mixer.counters.ticks != ticks { encodes.append(mixer.lastTickEncodes) }
            }
            for participant in participants {
                if let deadline = participant.core.nextDeadline, deadline <= now {
                    carry(participant.core.handleTimeout(now: now), from: participant)
                }
            }
            if elapsedMilliseconds % 20 == 0 {
                for participant in participants {
                    let samples = participant.tone?.next(count: 960) ?? [Int16](repeating: 0, count: 960)
                    carry(try participant.core.sendAudio(AudioFrame(samples: samples, sampleRate: 48_000), now: now), from: participant)
                    participant.heard += participant.core.playout(now: now)
                }
            }
        }
    }

    private func deliverDue() {
        let due = inFlight.filter { $0.due <= now }
        inFlight.removeAll { $0.due <= now }
        for item in due {
            if let participant = participants.first(where: { $0.serverAddress == item.to }) {
                perform(mixer.receive(item.bytes, from: item.from, on: participant.id, local: item.to, now: now))
            } else if let participant = participants.first(where: { $0.address == item.to }) {
                if item.bytes.count > 1, !(192...223).contains(item.bytes[1]), let packet = try? RTPPacket(parsing: item.bytes) {
                    participant.received.append((elapsedMilliseconds, packet))
                }
                carry(participant.core.receive(item.bytes, from: item.from, on: item.to, now: now), from: participant)
            }
        }
    }

    /// The level of `frequency` in the last `milliseconds` of what `participant` heard (48 kHz), dBFS.
    func level(_ participant: Int, at frequency: Double, lastMilliseconds milliseconds: Int = 1000) -> Double {
        FrequencyAnalysis.toneLevelDBFS(samples: Array(participants[participant].heard.suffix(48 * milliseconds)),
                                        sampleRate: 48_000, frequency: frequency)
    }

    /// The level a tone of `amplitude` is sent at, dBFS.
    static func sentLevel(amplitude: Double = 0.1) -> Double {
        var tone = ToneGenerator(frequency: 1000, amplitude: amplitude, sampleRate: 48_000)
        return FrequencyAnalysis.rmsDBFS(samples: tone.next(count: 48_000))
    }
}
