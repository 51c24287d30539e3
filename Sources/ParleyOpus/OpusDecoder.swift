import COpus

/// An Opus decoder (RFC 6716) over libopus: Opus packets in, 16-bit PCM out, with packet
/// loss concealment and recovery of a lost frame from the next packet's in-band FEC.
///
/// Not `Sendable`: one decoder belongs to one receiving stream and is used from one task.
public final class OpusDecoder {
    /// Output sample rate in Hz (8000, 12000, 16000, 24000 or 48000); any Opus packet
    /// decodes at any of these rates.
    public let sampleRate: Int
    /// 1 (mono) or 2 (interleaved stereo) output channels.
    public let channels: Int
    /// Samples per channel in one 20 ms frame at `sampleRate`.
    public var samplesPerFrame: Int { sampleRate / 50 }

    private let state: OpaquePointer
    /// Room for the longest Opus packet, 120 ms per channel (RFC 6716 section 3.2.5).
    private var pcmBuffer: [Int16]

    /// Creates a decoder.
    /// - Throws: `OpusError` `.badArgument` for an unsupported rate or channel count.
    public init(sampleRate: Int = 48000, channels: Int = 1) throws(OpusError) {
        try validateOpusFormat(sampleRate: sampleRate, channels: channels, operation: "opus_decoder_create")
        var error: Int32 = OPUS_OK
        let created = opus_decoder_create(Int32(sampleRate), Int32(channels), &error)
        guard error == OPUS_OK, let created else {
            throw OpusError(operation: "opus_decoder_create", libopusCode: error == OPUS_OK ? OPUS_ALLOC_FAIL : error)
        }
        self.state = created
        self.sampleRate = sampleRate
        self.channels = channels
        self.pcmBuffer = [Int16](repeating: 0, count: sampleRate * 12 / 100 * channels)
    }

    deinit { opus_decoder_destroy(state) }

    /// Decodes one packet into interleaved PCM (`channels * n` samples, `n` the packet's
    /// duration at `sampleRate`, normally `samplesPerFrame`).
    /// - Throws: `OpusError` `.invalidPacket` for an empty, corrupted or non-Opus packet.
    public func decode(_ packet: [UInt8]) throws(OpusError) -> [Int16] {
        guard !packet.isEmpty else {
            // libopus would treat an empty packet as a loss; that is decodeLost()'s job.
            throw OpusError(.invalidPacket, operation: "opus_decode", detail: "empty packet")
        }
        return try run(packet, frameSize: pcmBuffer.count / channels, fec: false, operation: "opus_decode")
    }

    /// Conceals one lost frame (packet loss concealment), continuing the signal from the
    /// decoder's history.
    /// - Parameter samplesPerChannel: length of the gap; a multiple of 2.5 ms. Defaults to
    ///   the duration of the last decoded packet (20 ms before any).
    public func decodeLost(samplesPerChannel: Int? = nil) throws(OpusError) -> [Int16] {
        let frameSize = try lostFrameSize(samplesPerChannel)
        return try run(nil, frameSize: frameSize, fec: false, operation: "opus_decode (PLC)")
    }

    /// Recovers the frame lost just before `nextPacket` from the in-band FEC data (LBRR)
    /// carried in `nextPacket`. Afterwards, decode `nextPacket` itself with `decode(_:)`.
    ///
    /// If `nextPacket` carries no FEC data, libopus falls back to concealment, so the
    /// result is then the same as `decodeLost(samplesPerChannel:)`.
    /// - Parameter samplesPerChannel: the lost frame's length (defaults as for `decodeLost`).
    public func decodeFEC(nextPacket: [UInt8], samplesPerChannel: Int? = nil) throws(OpusError) -> [Int16] {
        guard !nextPacket.isEmpty else {
            throw OpusError(.invalidPacket, operation: "opus_decode (FEC)", detail: "empty packet")
        }
        let frameSize = try lostFrameSize(samplesPerChannel)
        return try run(nextPacket, frameSize: frameSize, fec: true, operation: "opus_decode (FEC)")
    }

    /// Samples per channel that `packet` decodes to at `sampleRate`, without decoding it.
    /// - Throws: `OpusError` `.invalidPacket` if the packet's table of contents is malformed.
    public func sampleCount(of packet: [UInt8]) throws(OpusError) -> Int {
        guard !packet.isEmpty else {
            throw OpusError(.invalidPacket, operation: "opus_decoder_get_nb_samples", detail: "empty packet")
        }
        let state = self.state
        let count = packet.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress else { return OPUS_BAD_ARG }
            return opus_decoder_get_nb_samples(state, base, Int32(clamping: bytes.count))
        }
        let samples = Int(try check(count, "opus_decoder_get_nb_samples"))
        guard samples > 0 else {
            // RFC 6716 section 3.2.5: a code 3 packet must hold at least one frame.
            throw OpusError(.invalidPacket, operation: "opus_decoder_get_nb_samples", detail: "packet holds no frames")
        }
        return samples
    }

    /// Forgets all history, as for a new stream.
    public func reset() throws(OpusError) {
        try check(parley_opus_decoder_reset(state), "OPUS_RESET_STATE")
    }

    private func lostFrameSize(_ requested: Int?) throws(OpusError) -> Int {
        if let requested {
            let quantum = sampleRate / 400  // 2.5 ms
            guard requested > 0, requested % quantum == 0, requested <= pcmBuffer.count / channels else {
                throw OpusError(.badArgument, operation: "opus_decode (PLC)",
                                detail: "\(requested) samples is not a multiple of 2.5 ms up to 120 ms at \(sampleRate) Hz")
            }
            return requested
        }
        var last: Int32 = 0
        try check(parley_opus_decoder_get_last_packet_duration(state, &last), "OPUS_GET_LAST_PACKET_DURATION")
        return last > 0 ? Int(last) : samplesPerFrame
    }

    private func run(_ packet: [UInt8]?, frameSize: Int, fec: Bool, operation: String) throws(OpusError) -> [Int16] {
        let state = self.state
        let decoded: Int32 = pcmBuffer.withUnsafeMutableBufferPointer { output in
            guard let target = output.baseAddress else { return OPUS_BAD_ARG }
            if let packet {
                return packet.withUnsafeBufferPointer { bytes in
                    opus_decode(state, bytes.baseAddress, Int32(clamping: bytes.count),
                                target, Int32(frameSize), fec ? 1 : 0)
                }
            } else {
                return opus_decode(state, nil, 0, target, Int32(frameSize), 0)
            }
        }
        let samples = Int(try check(decoded, operation))
        return Array(pcmBuffer[0..<(samples * channels)])
    }
}
