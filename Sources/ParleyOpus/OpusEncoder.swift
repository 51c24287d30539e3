import COpus

/// An Opus encoder (RFC 6716) over libopus: 16-bit PCM frames in, Opus packets out.
///
/// Defaults suit a voice call: 48 kHz mono, `OPUS_APPLICATION_VOIP`, 20 ms frames
/// (960 samples), 32 kbit/s, complexity 9, in-band FEC on with 5 % expected loss, DTX off.
/// libopus 1.3.1 only emits in-band FEC (LBRR) from about 32 kbit/s at these settings;
/// below that, turning FEC on sends nothing extra.
///
/// Not `Sendable`: one encoder belongs to one sending stream and is used from one task.
public final class OpusEncoder {
    /// PCM sample rate in Hz (8000, 12000, 16000, 24000 or 48000).
    public let sampleRate: Int
    /// 1 (mono) or 2 (interleaved stereo).
    public let channels: Int
    /// The coding mode chosen at creation.
    public let application: OpusApplication
    /// Samples per channel in one 20 ms frame: 960 at 48 kHz.
    public var samplesPerFrame: Int { sampleRate / 50 }

    private let state: OpaquePointer
    /// RFC 6716 section 3.2.1: a frame is at most 1275 bytes; a packet of up to three
    /// 20 ms frames (60 ms) fits in 4000 bytes, the size libopus documents as ample.
    private static let maxPacketBytes = 4000
    private var packetBuffer = [UInt8](repeating: 0, count: OpusEncoder.maxPacketBytes)

    /// Creates an encoder and applies the given settings.
    /// - Throws: `OpusError` with kind `.badArgument` for an unsupported rate, channel count
    ///   or setting, or the libopus error if creation fails.
    public init(
        sampleRate: Int = 48000,
        channels: Int = 1,
        application: OpusApplication = .voip,
        bitrate: Int = 32000,
        complexity: Int = 9,
        inbandFEC: Bool = true,
        packetLossPercent: Int = 5,
        dtx: Bool = false
    ) throws(OpusError) {
        try validateOpusFormat(sampleRate: sampleRate, channels: channels, operation: "opus_encoder_create")
        var error: Int32 = OPUS_OK
        let created = opus_encoder_create(Int32(sampleRate), Int32(channels), application.libopusValue, &error)
        guard error == OPUS_OK, let created else {
            throw OpusError(operation: "opus_encoder_create", libopusCode: error == OPUS_OK ? OPUS_ALLOC_FAIL : error)
        }
        self.state = created
        self.sampleRate = sampleRate
        self.channels = channels
        self.application = application
        try setBitrate(bitrate)
        try setComplexity(complexity)
        try setInbandFEC(inbandFEC)
        try setPacketLossPercent(packetLossPercent)
        try setDTX(dtx)
    }

    deinit { opus_encoder_destroy(state) }

    /// Sets the target bitrate in bit/s (libopus accepts 500...512000).
    public func setBitrate(_ bitsPerSecond: Int) throws(OpusError) {
        try check(parley_opus_set_bitrate(state, clamped(bitsPerSecond)), "OPUS_SET_BITRATE")
    }

    /// The bitrate libopus is currently targeting, in bit/s.
    public func bitrate() throws(OpusError) -> Int {
        var value: Int32 = 0
        try check(parley_opus_get_bitrate(state, &value), "OPUS_GET_BITRATE")
        return Int(value)
    }

    /// Sets computational complexity, 0 (fastest) to 10 (best).
    public func setComplexity(_ complexity: Int) throws(OpusError) {
        try check(parley_opus_set_complexity(state, clamped(complexity)), "OPUS_SET_COMPLEXITY")
    }

    /// Turns in-band forward error correction (SILK LBRR) on or off.
    public func setInbandFEC(_ enabled: Bool) throws(OpusError) {
        try check(parley_opus_set_inband_fec(state, enabled ? 1 : 0), "OPUS_SET_INBAND_FEC")
    }

    /// Tells the encoder the expected packet loss, 0...100 %, which sizes the FEC it adds.
    public func setPacketLossPercent(_ percent: Int) throws(OpusError) {
        try check(parley_opus_set_packet_loss_perc(state, clamped(percent)), "OPUS_SET_PACKET_LOSS_PERC")
    }

    /// Turns discontinuous transmission on or off. With DTX on, silent frames encode to
    /// packets of 1 or 2 bytes, which a sender may skip (RFC 7587 section 3.1.3).
    public func setDTX(_ enabled: Bool) throws(OpusError) {
        try check(parley_opus_set_dtx(state, enabled ? 1 : 0), "OPUS_SET_DTX")
    }

    /// The encoder's look-ahead in samples per channel at `sampleRate` (312 at 48 kHz in
    /// VOIP mode: 6.5 ms). The decoder's output lags the input by this much.
    public func lookahead() throws(OpusError) -> Int {
        var value: Int32 = 0
        try check(parley_opus_get_lookahead(state, &value), "OPUS_GET_LOOKAHEAD")
        return Int(value)
    }

    /// Forgets all history, as for a new stream; settings are kept.
    public func reset() throws(OpusError) {
        try check(parley_opus_encoder_reset(state), "OPUS_RESET_STATE")
    }

    /// Encodes one frame of interleaved PCM into one Opus packet.
    ///
    /// - Parameter pcm: `channels * n` samples, where `n` is a legal Opus frame size at
    ///   `sampleRate` (2.5, 5, 10, 20, 40 or 60 ms; normally 20 ms, `samplesPerFrame`).
    /// - Returns: the packet, at most 4000 bytes.
    /// - Throws: `OpusError` `.badArgument` for a wrong sample count.
    public func encode(_ pcm: [Int16]) throws(OpusError) -> [UInt8] {
        guard !pcm.isEmpty, pcm.count % channels == 0, pcm.count / channels <= sampleRate * 3 / 50 else {
            throw OpusError(.badArgument, operation: "opus_encode",
                            detail: "\(pcm.count) samples is not a whole Opus frame for \(channels) channel(s) at \(sampleRate) Hz")
        }
        let frameSize = Int32(pcm.count / channels)
        let state = self.state
        let written = pcm.withUnsafeBufferPointer { input in
            packetBuffer.withUnsafeMutableBufferPointer { output in
                guard let source = input.baseAddress, let target = output.baseAddress else { return OPUS_BAD_ARG }
                return opus_encode(state, source, frameSize, target, Int32(output.count))
            }
        }
        let count = try check(written, "opus_encode")
        return Array(packetBuffer[0..<Int(count)])
    }
}

/// Clamps a Swift `Int` setting into `opus_int32`; libopus itself rejects out-of-range values.
func clamped(_ value: Int) -> Int32 {
    Int32(clamping: value)
}
