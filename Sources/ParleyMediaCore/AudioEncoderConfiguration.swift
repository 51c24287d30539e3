/// Everything that decides the bytes an `AudioPayloadCodec` makes from a frame: the codec,
/// the rate of the audio it takes and, for Opus, its encoder settings. Two encoders of equal configurations fed the same
/// frames make the same payloads, so a conference mixer encodes the mix its listeners
/// share once per configuration and hands the payload to every leg of that configuration.
public struct AudioEncoderConfiguration: Sendable, Hashable {
    /// The payload format.
    public var kind: AudioPayloadCodec.Kind
    /// The Opus encoder's settings; nil for G.711, which has none.
    public var opus: AudioPayloadCodec.OpusOptions?
    /// The rate of the audio the encoder takes (`AudioPayloadCodec.audioRate`).
    public var audioRate: Int

    public init(kind: AudioPayloadCodec.Kind, opus: AudioPayloadCodec.OpusOptions? = nil,
                audioRate: Int = AudioPayloadCodec.interfaceRate) {
        self.kind = kind
        self.opus = kind == .opus ? (opus ?? AudioPayloadCodec.OpusOptions()) : nil
        self.audioRate = audioRate
    }

    /// The RTP clock rate of the payload format.
    public var clockRate: Int { kind == .opus ? 48_000 : 8_000 }

    /// A new codec of this configuration (its encoder starts afresh).
    /// - Throws: `CodecError` when libopus or the resampler cannot be set up, or the audio
    ///   rate is not one a codec takes.
    public func makeCodec() throws(CodecError) -> AudioPayloadCodec {
        guard let codec = try AudioPayloadCodec(name: kind.rawValue, opus: opus ?? AudioPayloadCodec.OpusOptions(),
                                                audioRate: audioRate) else {
            throw CodecError(.invalidArgument, "audio encoder", "no codec named \(kind.rawValue)")
        }
        return codec
    }
}
