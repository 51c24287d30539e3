import COpus

/// The libopus coding mode, fixed when an encoder is created.
public enum OpusApplication: Sendable, Hashable, CustomStringConvertible {
    /// Speech: favours intelligibility (`OPUS_APPLICATION_VOIP`). Parley's default.
    case voip
    /// Music and mixed content: favours fidelity (`OPUS_APPLICATION_AUDIO`).
    case audio
    /// Lowest delay, CELT only (`OPUS_APPLICATION_RESTRICTED_LOWDELAY`).
    case restrictedLowDelay

    var libopusValue: Int32 {
        switch self {
        case .voip: OPUS_APPLICATION_VOIP
        case .audio: OPUS_APPLICATION_AUDIO
        case .restrictedLowDelay: OPUS_APPLICATION_RESTRICTED_LOWDELAY
        }
    }

    public var description: String {
        switch self {
        case .voip: "voip"
        case .audio: "audio"
        case .restrictedLowDelay: "restricted-lowdelay"
        }
    }
}

/// Sample rates libopus accepts for PCM in and out (RFC 6716 section 2).
let opusSampleRates: Set<Int> = [8000, 12000, 16000, 24000, 48000]

func validateOpusFormat(sampleRate: Int, channels: Int, operation: String) throws(OpusError) {
    guard opusSampleRates.contains(sampleRate) else {
        throw OpusError(.badArgument, operation: operation,
                        detail: "sample rate \(sampleRate) is not one of 8000, 12000, 16000, 24000, 48000")
    }
    guard channels == 1 || channels == 2 else {
        throw OpusError(.badArgument, operation: operation, detail: "channel count \(channels) is not 1 or 2")
    }
}
