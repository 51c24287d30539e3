/// Everything that decides the bytes an `AudioPayloadCodec` makes from a frame: the codec
/// and, for Opus, its encoder settings. Two encoders of equal configurations fed the same
/// frames make the same payloads, so a conference mixer encodes the mix its listeners
/// share once per configuration and hands the payload to every leg of that configuration.
public struct AudioEncoderConfiguration: Sendable, Hashable {
    /// The payload format.
    public var kind: AudioPayloadCodec.Kind
    /// The Opus encoder's settings; nil for G.711, which has none.
    public var opus: AudioPayloadCodec.OpusOptions?

    public init(kind: AudioPayloadCodec.Kind, opus: AudioPayloadCodec.OpusOptions? = nil) {
        self.kind = kind
        self.opus = kind == .opus ? (opus ?? AudioPayloadCodec.OpusOptions()) : nil
    }

    /// The RTP clock rate of the payload format.
    public var clockRate: Int { kind == .opus ? 48_000 : 8_000 }

    /// A new codec of this configuration (its encoder starts afresh).
    /// - Throws: `CodecError` when libopus or the resampler cannot be set up.
    public func makeCodec() throws(CodecError) -> AudioPayloadCodec {
        guard let codec = try AudioPayloadCodec(name: kind.rawValue, opus: opus ?? AudioPayloadCodec.OpusOptions()) else {
            throw CodecError(.invalidArgument, "audio encoder", "no codec named \(kind.rawValue)")
        }
        return codec
    }
}
