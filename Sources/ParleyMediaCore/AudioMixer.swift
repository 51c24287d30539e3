/// The mix of a conference room, one 20 ms tick at a time, at the room's internal rate.
///
/// Each tick takes every participant's decoded frame (16-bit mono at `sampleRate`) with
/// whether it is muted or on hold, and decides who is talking: a `VoiceActivityDetector`
/// per participant, and of those active at most `maximumTalkers`, the loudest (a current
/// talker gets `talkerStickiness` dB of advantage so two voices of like level do not
/// swap places every frame). Only talkers are mixed. Muted and on-hold participants never
/// contribute and never become talkers.
///
/// Out come two kinds of mix: one `shared` mix of all talkers for every participant who
/// is not talking (they all hear the same thing, so an owner can encode it once per codec
/// configuration), and for each talker its own mix of every other talker (N-1: nobody
/// hears themselves). Each output stream goes through its own `SoftLimiter`, so three loud
/// talkers summed never clip and one talker at a normal level passes at unity gain.
///
/// Sums are exact integers: a talker's N-1 mix is the sum of the others' samples, the
/// shared mix the sum of all, before the limiter. A participant who becomes a talker is
/// faded in over its first frame, so it does not start with a click.
///
/// Work and memory are bounded: at most `maximumParticipants` inputs per tick, one sum of
/// squares per participant, and `maximumTalkers` + 1 mixes. State is kept per participant
/// present in the last tick (whoever is absent from a tick is forgotten) and per talker.
public struct AudioMixer<ParticipantID: Hashable & Sendable>: Sendable {
    /// How the room mixes.
    public struct Configuration: Sendable, Hashable {
        /// The rates a room can mix at.
        public static var supportedRates: [Int] { [16_000, 48_000] }

        /// The room's internal rate, Hz: 16000 or 48000.
        public var sampleRate = 48_000
        /// The most participants mixed at once (1...16).
        public var maximumTalkers = 3
        /// The most inputs one tick takes.
        public var maximumParticipants = 500
        /// dB of advantage a current talker has when talkers are ranked by level.
        public var talkerStickiness: Double = 6
        /// Voice activity per participant.
        public var voiceActivity = VoiceActivityDetector.Configuration()
        /// The limiter's threshold, as a fraction of full scale.
        public var limiterThreshold: Float = 0.7
        /// The limiter's release per 20 ms frame (see `SoftLimiter`).
        public var limiterRelease: Float = 0.12

        public init() {}

        /// Samples in one 20 ms frame at `sampleRate`.
        public var frameSamples: Int { sampleRate / 50 }
    }

    /// One participant's frame for a tick.
    public struct Input: Sendable {
        public var id: ParticipantID
        /// `Configuration.frameSamples` samples at the room's rate; ignored (and may be empty)
        /// when the participant is muted or on hold.
        public var samples: [Int16]
        public var muted: Bool
        public var onHold: Bool

        public init(id: ParticipantID, samples: [Int16], muted: Bool = false, onHold: Bool = false) {
            self.id = id
            self.samples = samples
            self.muted = muted
            self.onHold = onHold
        }
    }

    /// What one tick produced.
    public struct Output: Sendable {
        /// Who is talking, loudest first.
        public var talkers: [ParticipantID]
        /// Whether `talkers` (as a set) differs from the tick before.
        public var talkersChanged: Bool
        /// The mix of every talker: what every participant who is not a talker hears.
        public var shared: [Int16]
        /// Each talker's mix of the others, in the order of `talkers`.
        public var talkerMixes: [[Int16]]

        /// What `participant` hears: its N-1 mix when it is a talker, else the shared mix.
        public func mix(for participant: ParticipantID) -> [Int16] {
            if let index = talkers.firstIndex(of: participant) { return talkerMixes[index] }
            return shared
        }

        /// Whether `participant` is one of the talkers.
        public func isTalker(_ participant: ParticipantID) -> Bool { talkers.contains(participant) }
    }

    /// What the mixer did so far.
    public struct Counters: Sendable, Hashable, Encodable {
        /// Ticks mixed.
        public var ticks: UInt64 = 0
        /// Talker frames summed into the mixes.
        public var framesMixed: UInt64 = 0
        /// Output frames the limiter turned down.
        public var framesLimited: UInt64 = 0
        /// Ticks at which the set of talkers changed.
        public var talkerChanges: UInt64 = 0

        public init() {}
    }

    private struct Participant: Sendable {
        var detector: VoiceActivityDetector
        var lastTick: UInt64
    }

    public let configuration: Configuration
    /// Who was talking after the last tick, loudest first.
    public private(set) var talkers: [ParticipantID] = []
    public private(set) var counters = Counters()
    private var participants: [ParticipantID: Participant] = [:]
    private var sharedLimiter: SoftLimiter
    /// One limiter per talker's N-1 stream; a participant who stops talking loses its own.
    private var talkerLimiters: [ParticipantID: SoftLimiter] = [:]

    /// - Throws: `CodecError` `.invalidArgument` for a rate other than 16 or 48 kHz, or
    ///   `maximumTalkers` outside 1...16, or `maximumParticipants` under 1.
    public init(configuration: Configuration = Configuration()) throws(CodecError) {
        guard Configuration.supportedRates.contains(configuration.sampleRate) else {
            throw CodecError(.invalidArgument, "audio mixer", "a room mixes at 16000 or 48000 Hz, not \(configuration.sampleRate)")
        }
        guard (1...16).contains(configuration.maximumTalkers) else {
            throw CodecError(.invalidArgument, "audio mixer", "maximumTalkers must be 1...16, not \(configuration.maximumTalkers)")
        }
        guard configuration.maximumParticipants >= 1 else {
            throw CodecError(.invalidArgument, "audio mixer", "maximumParticipants must be at least 1")
        }
        self.configuration = configuration
        sharedLimiter = Self.makeLimiter(configuration)
    }

    /// Mixes one tick.
    /// - Throws: `CodecError` `.invalidArgument` when there are more than
    ///   `maximumParticipants` inputs, a participant appears twice, or a contributing
    ///   participant's frame is not `frameSamples` long; nothing changes then.
    public mutating func mix(_ inputs: [Input]) throws(CodecError) -> Output {
        let frame = configuration.frameSamples
        guard inputs.count <= configuration.maximumParticipants else {
            throw CodecError(.invalidArgument, "audio mixer", "\(inputs.count) inputs, at most \(configuration.maximumParticipants)")
        }
        for input in inputs where !input.muted && !input.onHold && input.samples.count != frame {
            throw CodecError(.invalidArgument, "audio mixer", "\(input.samples.count) samples from \(input.id), a frame is \(frame)")
        }
        var seen = Set<ParticipantID>(minimumCapacity: inputs.count)
        for input in inputs where !seen.insert(input.id).inserted {
            throw CodecError(.invalidArgument, "audio mixer", "\(input.id) appears twice in one tick")
        }
        let tick = counters.ticks &+ 1
        counters.ticks = tick

        // Voice activity: who may talk, and how loud.
        var candidates: [(index: Int, rank: Double)] = []
        let fresh = Participant(detector: VoiceActivityDetector(configuration: configuration.voiceActivity), lastTick: tick)
        for (index, input) in inputs.enumerated() {
            let bonus = talkers.contains(input.id) ? configuration.talkerStickiness : 0
            // In place: one lookup per participant, and its detector is not copied.
            if let rank = Self.rank(input, tick: tick, bonus: bonus, participant: &participants[input.id, default: fresh]) {
                candidates.append((index, rank))
            }
        }
        if participants.count > inputs.count { participants = participants.filter { $0.value.lastTick == tick } }
        // Loudest first; equal ranks keep the inputs' order, so a tick repeats exactly.
        candidates.sort { $0.rank != $1.rank ? $0.rank > $1.rank : $0.index < $1.index }
        let chosen = candidates.prefix(configuration.maximumTalkers).map(\.index)
        let newTalkers = chosen.map { inputs[$0].id }
        let changed = Set(newTalkers) != Set(talkers)
        if changed { counters.talkerChanges &+= 1 }

        // Exact sums: every talker's contribution, and their total.
        var contributions: [[Int32]] = []
        contributions.reserveCapacity(chosen.count)
        var total = [Int32](repeating: 0, count: frame)
        for index in chosen {
            let input = inputs[index]
            let fadeIn = !talkers.contains(input.id)
            var contribution = [Int32](repeating: 0, count: frame)
            input.samples.withUnsafeBufferPointer { samples in
                for n in 0..<frame {
                    let value = Int32(samples[n])
                    contribution[n] = fadeIn ? value * Int32(n + 1) / Int32(frame) : value
                    total[n] &+= contribution[n]
                }
            }
            contributions.append(contribution)
        }
        counters.framesMixed &+= UInt64(chosen.count)

        var limiters: [ParticipantID: SoftLimiter] = [:]
        var talkerMixes: [[Int16]] = []
        talkerMixes.reserveCapacity(chosen.count)
        for (position, id) in newTalkers.enumerated() {
            var others = total
            let own = contributions[position]
            for n in 0..<frame { others[n] &-= own[n] }
            var limiter = talkerLimiters[id] ?? Self.makeLimiter(configuration)
            talkerMixes.append(limit(others, with: &limiter))
            limiters[id] = limiter
        }
        talkerLimiters = limiters
        var shared = sharedLimiter
        let sharedMix = limit(total, with: &shared)
        sharedLimiter = shared
        talkers = newTalkers
        return Output(talkers: newTalkers, talkersChanged: changed, shared: sharedMix, talkerMixes: talkerMixes)
    }

    /// A participant's voice activity for the tick, and its rank among the candidate talkers
    /// when it is speaking.
    private static func rank(_ input: Input, tick: UInt64, bonus: Double, participant: inout Participant) -> Double? {
        participant.lastTick = tick
        if input.muted || input.onHold {
            participant.detector.reset()
            return nil
        }
        guard participant.detector.analyze(input.samples) else { return nil }
        return participant.detector.speechLevel + bonus
    }

    /// Forgets a participant (it left): its voice activity and, if it was talking, its
    /// place among the talkers from the next tick.
    public mutating func remove(_ participant: ParticipantID) {
        participants[participant] = nil
        talkerLimiters[participant] = nil
        talkers.removeAll { $0 == participant }
    }

    /// The voice activity of a participant present in the last tick.
    public func voiceActivity(of participant: ParticipantID) -> VoiceActivityDetector? {
        participants[participant]?.detector
    }

    private mutating func limit(_ mix: [Int32], with limiter: inout SoftLimiter) -> [Int16] {
        var output = [Int16](repeating: 0, count: mix.count)
        let limited = mix.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { limiter.process(input, into: $0) }
        }
        if limited { counters.framesLimited &+= 1 }
        return output
    }

    private static func makeLimiter(_ configuration: Configuration) -> SoftLimiter {
        SoftLimiter(threshold: configuration.limiterThreshold, releasePerFrame: configuration.limiterRelease,
                    attackSamples: configuration.sampleRate / 1000)
    }
}
