import ParleyOpus

/// Turns 20 ms frames of mono audio into RTP payloads of one codec (Opus, PCMU, PCMA) and
/// back, with concealment for lost packets. The audio side runs at `audioRate`: 48 kHz
/// unless the codec is made for another (a conference room mixing at 16 kHz makes its
/// legs' codecs at 16 kHz, so libopus decodes straight to the room's rate and encodes from
/// it, and nothing resamples in between). Opus payloads are the same format whatever the
/// audio rate (RFC 7587: the RTP clock stays 48 kHz; an encoder fed 16 kHz sends
/// wideband); G.711 runs at 8 kHz behind a resampler.
///
/// A media leg runs one per negotiated stream; a mixer or a gateway runs one per leg it
/// decodes and encodes. Holds libopus state, so it is not `Sendable`: keep it on the thread
/// of the leg or topology that owns it.
public final class AudioPayloadCodec {
    /// The payload formats it runs.
    public enum Kind: String, Sendable, Hashable {
        case opus, pcmu, pcma
    }

    /// Options for the Opus encoder.
    public struct OpusOptions: Sendable, Hashable {
        /// Encoder target in bit/s.
        public var bitrate: Int
        /// In-band FEC (LBRR) in what is encoded.
        public var inbandFEC: Bool
        /// Discontinuous transmission: near-silent frames come out as 1-2 bytes.
        public var dtx: Bool
        /// The loss rate the encoder plans its FEC for, in percent.
        public var expectedLossPercent: Int
        /// libopus's computational complexity, 0 (cheapest) to 10 (best quality per bit);
        /// outside that range the codec refuses to be made. 9 by default, as `OpusEncoder`.
        public var complexity: Int

        public init(bitrate: Int = 32_000, inbandFEC: Bool = true, dtx: Bool = false, expectedLossPercent: Int = 5,
                    complexity: Int = 9) {
            self.bitrate = bitrate
            self.inbandFEC = inbandFEC
            self.dtx = dtx
            self.expectedLossPercent = expectedLossPercent
            self.complexity = complexity
        }
    }

    /// The sample rate of the audio side unless a codec is made for another.
    public static let interfaceRate = 48_000
    /// Samples in one 20 ms frame at `interfaceRate`.
    public static let frameSamples = 960
    /// The audio rates a codec can be made for: libopus decodes to and encodes from each
    /// natively, and G.711's resamplers run from 8 kHz to each.
    public static let supportedAudioRates = [8_000, 12_000, 16_000, 24_000, 48_000]

    /// The sample rate of the audio side: what `decode` and `conceal` return and `encode`
    /// takes.
    public let audioRate: Int
    /// Samples in one 20 ms frame of the audio side.
    public var samplesPerFrame: Int { audioRate / 50 }

    public let kind: Kind
    /// RTP clock rate of the payload format.
    public let clockRate: Int
    private let opusEncoder: OpusEncoder?
    private let opusDecoder: OpusDecoder?
    private var downsampler: Resampler?
    private var upsampler: Resampler?
    /// Last decoded G.711 frame (48 kHz), faded and repeated to conceal a loss.
    private var lastG711Frame: [Int16] = []
    private var concealedInARow = 0
    /// Whether the last `conceal` rebuilt its audio from the next packet's in-band FEC.
    public private(set) var lastConcealmentUsedFEC = false

    /// The codec for an SDP encoding name (`opus`, `PCMU`, `PCMA`, any case), or nil for a
    /// name it does not run. Throws when libopus or the resampler cannot be set up, or
    /// (`.invalidArgument`) for an audio rate not in `supportedAudioRates`.
    /// - Parameter audioRate: the rate of the audio side (`interfaceRate` by default).
    public init?(name: String, opus: OpusOptions = OpusOptions(), audioRate: Int = AudioPayloadCodec.interfaceRate) throws(CodecError) {
        switch name.lowercased() {
        case "opus": kind = .opus
        case "pcmu": kind = .pcmu
        case "pcma": kind = .pcma
        default: return nil
        }
        guard Self.supportedAudioRates.contains(audioRate) else {
            throw CodecError(.invalidArgument, name, "an audio rate of \(audioRate) Hz (one of \(Self.supportedAudioRates))")
        }
        self.audioRate = audioRate
        do {
            if kind == .opus {
                clockRate = 48_000
                guard (0...10).contains(opus.complexity) else {
                    throw CodecError(.invalidArgument, "opus", "complexity \(opus.complexity) is not in 0...10")
                }
                let encoder = try OpusEncoder(sampleRate: audioRate, channels: 1, application: .voip, bitrate: opus.bitrate,
                                              complexity: opus.complexity)
                try encoder.setInbandFEC(opus.inbandFEC)
                try encoder.setDTX(opus.dtx)
                try encoder.setPacketLossPercent(opus.expectedLossPercent)
                opusEncoder = encoder
                opusDecoder = try OpusDecoder(sampleRate: audioRate, channels: 1)
            } else {
                clockRate = 8_000
                opusEncoder = nil
                opusDecoder = nil
                if audioRate != 8_000 {
                    downsampler = try Resampler(from: audioRate, to: 8_000)
                    upsampler = try Resampler(from: 8_000, to: audioRate)
                }
            }
        } catch let error as CodecError {
            throw error
        } catch {
            throw CodecError(.codecFailure, "opus", "\(error)")
        }
    }

    /// Sets the Opus encoder's in-band FEC and the loss it plans that FEC for (see
    /// `OpusLossProtection`); nothing for G.711.
    public func setLossProtection(inbandFEC: Bool, expectedLossPercent: Int) throws(CodecError) {
        guard let opusEncoder else { return }
        do {
            try opusEncoder.setInbandFEC(inbandFEC)
            try opusEncoder.setPacketLossPercent(expectedLossPercent)
        } catch {
            throw CodecError(.codecFailure, "opus loss protection", "\(error)")
        }
    }

    /// RTP timestamp units in one 20 ms frame.
    public var timestampStep: UInt32 { UInt32(clockRate / 50) }

    /// Encodes one 20 ms frame at `audioRate` (`samplesPerFrame` samples).
    public func encode(_ samples: [Int16]) throws(CodecError) -> [UInt8] {
        switch kind {
        case .opus:
            guard let opusEncoder else { throw CodecError(.codecFailure, "opus encode", "no encoder") }
            do { return try opusEncoder.encode(samples) } catch { throw CodecError(.codecFailure, "opus encode", "\(error)") }
        case .pcmu, .pcma:
            let narrow = downsampler?.process(samples) ?? samples
            return kind == .pcmu ? G711.muLaw(encoding: narrow) : G711.aLaw(encoding: narrow)
        }
    }

    /// Decodes one payload to mono samples at `audioRate`.
    public func decode(_ payload: ArraySlice<UInt8>) throws(CodecError) -> [Int16] {
        concealedInARow = 0
        switch kind {
        case .opus:
            guard let opusDecoder else { throw CodecError(.codecFailure, "opus decode", "no decoder") }
            do { return try opusDecoder.decode(Array(payload)) } catch { throw CodecError(.codecFailure, "opus decode", "\(error)") }
        case .pcmu, .pcma:
            let narrow = kind == .pcmu ? G711.muLaw(decoding: Array(payload)) : G711.aLaw(decoding: Array(payload))
            let wide = upsampler?.process(narrow) ?? narrow
            lastG711Frame = wide
            return wide
        }
    }

    /// Audio for a lost stretch of `samples` samples at `audioRate`: Opus FEC from the next
    /// packet when it is there, else Opus concealment; for G.711 the last frame repeated
    /// with a fade (silence after 60 ms, as a long repetition sounds worse than a gap).
    public func conceal(samples: Int, nextPayload: ArraySlice<UInt8>?) -> [Int16] {
        concealedInARow += 1
        lastConcealmentUsedFEC = false
        // At most 120 ms, the longest Opus packet.
        let count = max(0, min(samples, audioRate * 12 / 100))
        // libopus takes gaps in multiples of 2.5 ms.
        let quantum = audioRate / 400
        let opusCount = max(quantum, count / quantum * quantum)
        switch kind {
        case .opus:
            guard let opusDecoder else { return [Int16](repeating: 0, count: count) }
            var out: [Int16]
            if let nextPayload, !nextPayload.isEmpty, let recovered = try? opusDecoder.decodeFEC(nextPacket: Array(nextPayload), samplesPerChannel: opusCount) {
                out = recovered
                lastConcealmentUsedFEC = true
            } else {
                out = (try? opusDecoder.decodeLost(samplesPerChannel: opusCount)) ?? []
            }
            if out.count < count { out += [Int16](repeating: 0, count: count - out.count) }
            return Array(out.prefix(count))
        case .pcmu, .pcma:
            guard concealedInARow <= 3, !lastG711Frame.isEmpty else { return [Int16](repeating: 0, count: count) }
            let gain = 1.0 - Double(concealedInARow) * 0.3
            var out: [Int16] = []
            out.reserveCapacity(count)
            while out.count < count {
                for sample in lastG711Frame where out.count < count { out.append(Int16(Double(sample) * gain)) }
            }
            return out
        }
    }
}
