import CALSA
import Glibc
import ParleyWireCore

/// One open ALSA PCM (`snd_pcm_t`) in Parley's one format: signed 16-bit little-endian,
/// 48 kHz, mono, interleaved read/write access, in 20 ms periods (960 frames).
///
/// It owns the handle and closes it in `deinit`. alsa-lib lets one thread at a time use a
/// PCM, so this class is not `Sendable`: ``ALSACaptureSource`` and ``ALSAPlaybackSink`` open
/// it on the caller's thread (so a bad device fails `start()` at once) and hand it to their
/// own I/O thread, which alone uses and closes it.
///
/// `read(into:)` and `write(_:)` block until all their samples are transferred; ALSA's
/// overruns and underruns ("xruns") and suspends are recovered with `snd_pcm_recover`
/// and counted in ``xrunsRecovered``. `waitUntilReady(timeout:)` bounds the wait, so that a
/// thread that must also watch a stop flag never blocks for long.
public final class ALSAPCM {
    /// Which way the audio goes.
    public enum Direction: Sendable, Hashable {
        /// From the device (a microphone).
        case capture
        /// To the device (a speaker).
        case playback
    }

    /// The only sample rate opened: Parley's media rate.
    public static let sampleRate = 48_000
    /// Samples (mono frames, in ALSA's terms) in 20 ms at 48 kHz: one period, one `AudioFrame`.
    public static let frameSamples = 960

    /// The device name as given to `init`.
    public let device: String
    /// Capture or playback.
    public let direction: Direction
    /// The period alsa-lib granted, in samples (960 unless the device cannot do 20 ms).
    public let periodSamples: Int
    /// The ring buffer alsa-lib granted, in samples: the most audio the device holds.
    public let bufferSamples: Int
    /// Overruns, underruns and suspends recovered so far.
    public private(set) var xrunsRecovered = 0

    private let handle: OpaquePointer

    /// Opens `device` and sets it to S16_LE, 48 kHz, mono, 20 ms periods.
    /// - Parameters:
    ///   - device: any ALSA PCM name: `default`, `hw:0`, `plughw:1,0`, `null`, or a PCM
    ///     that `definitions` defines. `hw:` devices convert nothing, so one that cannot
    ///     do 48 kHz mono S16_LE fails here; `plughw:` and `default` convert.
    ///   - definitions: ALSA configuration text (such as `pcm.test { type file ... }`)
    ///     added, for this open only, to a copy of the system's configuration, so a caller
    ///     (a test) can define a device without writing an asoundrc or setting
    ///     `ALSA_CONFIG_PATH` for the whole process.
    ///   - bufferPeriods: how many 20 ms periods the device's ring buffer holds (at least 2):
    ///     more survives longer scheduling hiccups, fewer means less latency.
    /// - Throws: `ALSAError` if the configuration does not parse, the device does not
    ///   exist or cannot be opened, or it refuses the format.
    public init(device: String, direction: Direction, definitions: String? = nil, bufferPeriods: Int = 4) throws(ALSAError) {
        let previousLog = parley_alsa_catch_log()
        defer { parley_alsa_restore_log(previousLog) }
        let stream = direction == .capture ? SND_PCM_STREAM_CAPTURE : SND_PCM_STREAM_PLAYBACK

        var opened: OpaquePointer?
        let result: Int32
        if let definitions {
            let configuration = try Self.configuration(adding: definitions, device: device)
            result = snd_pcm_open_lconf(&opened, device, stream, 0, configuration)
            // The PCM keeps what it needs; the tree is only read while opening.
            snd_config_delete(configuration)
        } else {
            result = snd_pcm_open(&opened, device, stream, 0)
        }
        guard result >= 0, let opened else {
            throw Self.error("snd_pcm_open", device: device, code: result)
        }
        do {
            (periodSamples, bufferSamples) = try Self.configure(opened, device: device, direction: direction, bufferPeriods: max(2, bufferPeriods))
        } catch {
            snd_pcm_close(opened)
            throw error
        }
        self.handle = opened
        self.device = device
        self.direction = direction
    }

    deinit {
        snd_pcm_close(handle)
    }

    /// Waits until a whole 20 ms frame can be read (capture) or written (playback)
    /// without blocking, or `timeout` passes. Starts a capture device that is not running
    /// yet, and recovers an xrun it finds.
    /// - Returns: true when a frame is ready, false on timeout.
    /// - Throws: `ALSAError` if the device failed and cannot be recovered (unplugged).
    public func waitUntilReady(timeout: Duration) throws(ALSAError) -> Bool {
        // A capture stream only produces once started; `snd_pcm_readi` would start it,
        // but a wait before the first read would otherwise time out for ever.
        if direction == .capture, snd_pcm_state(handle) == SND_PCM_STATE_PREPARED {
            let started = snd_pcm_start(handle)
            if started < 0 { try recover(started, "snd_pcm_start") }
        }
        let milliseconds = Int32(clamping: timeout.wholeMillisecondsRoundedUp)
        let result = snd_pcm_wait(handle, milliseconds)
        if result < 0 {
            try recover(result, "snd_pcm_wait")
            return false
        }
        return result > 0
    }

    /// Reads `samples.count` samples, blocking until they have all arrived.
    /// - Throws: `ALSAError` if the device failed and cannot be recovered.
    public func read(into samples: inout [Int16]) throws(ALSAError) {
        precondition(direction == .capture, "read from a playback PCM")
        let count = samples.count
        var done = 0
        while done < count {
            let result = samples.withUnsafeMutableBufferPointer { buffer in
                snd_pcm_readi(handle, buffer.baseAddress! + done, snd_pcm_uframes_t(count - done))
            }
            if result >= 0 {
                done += result
            } else {
                // After an overrun the samples read so far are still the audio before
                // the gap; the rest of the frame comes from after it.
                try recover(Int32(result), "snd_pcm_readi")
            }
        }
    }

    /// Writes all of `samples`, blocking until the device has taken them.
    /// - Throws: `ALSAError` if the device failed and cannot be recovered.
    public func write(_ samples: [Int16]) throws(ALSAError) {
        precondition(direction == .playback, "write to a capture PCM")
        var done = 0
        while done < samples.count {
            let result = samples.withUnsafeBufferPointer { buffer in
                snd_pcm_writei(handle, buffer.baseAddress! + done, snd_pcm_uframes_t(samples.count - done))
            }
            if result >= 0 {
                done += result
            } else {
                try recover(Int32(result), "snd_pcm_writei")
            }
        }
    }

    // MARK: Private

    /// Recovers from an xrun (-EPIPE), a suspend (-ESTRPIPE) or an interrupted call
    /// (-EINTR); anything else, or a failed recovery, throws.
    private func recover(_ code: Int32, _ operation: String) throws(ALSAError) {
        if code == -EAGAIN { return }
        // Silent: alsa-lib would otherwise log every xrun.
        let recovered = snd_pcm_recover(handle, code, 1)
        guard recovered >= 0 else {
            throw Self.error(operation, device: device, code: code)
        }
        if code == -EPIPE || code == -ESTRPIPE { xrunsRecovered += 1 }
    }

    private static func configure(_ pcm: OpaquePointer, device: String, direction: Direction, bufferPeriods: Int) throws(ALSAError) -> (period: Int, buffer: Int) {
        var hardware: OpaquePointer?
        guard snd_pcm_hw_params_malloc(&hardware) >= 0, let hardware else {
            throw ALSAError("snd_pcm_hw_params_malloc", device: device, code: -ENOMEM, message: String(cString: snd_strerror(-ENOMEM)))
        }
        defer { snd_pcm_hw_params_free(hardware) }
        let formatHint = "the device cannot do S16_LE 48000 Hz mono; a plughw: device or default converts"
        func check(_ result: Int32, _ operation: String, hint: String = "") throws(ALSAError) {
            if result < 0 { throw error(operation, device: device, code: result, hint: hint) }
        }
        try check(snd_pcm_hw_params_any(pcm, hardware), "snd_pcm_hw_params_any")
        try check(snd_pcm_hw_params_set_access(pcm, hardware, SND_PCM_ACCESS_RW_INTERLEAVED), "snd_pcm_hw_params_set_access")
        try check(snd_pcm_hw_params_set_format(pcm, hardware, SND_PCM_FORMAT_S16_LE), "snd_pcm_hw_params_set_format", hint: formatHint)
        try check(snd_pcm_hw_params_set_channels(pcm, hardware, 1), "snd_pcm_hw_params_set_channels", hint: formatHint)
        try check(snd_pcm_hw_params_set_rate(pcm, hardware, UInt32(sampleRate), 0), "snd_pcm_hw_params_set_rate", hint: formatHint)
        var period = snd_pcm_uframes_t(frameSamples)
        var direction: Int32 = 0
        try check(snd_pcm_hw_params_set_period_size_near(pcm, hardware, &period, &direction), "snd_pcm_hw_params_set_period_size_near")
        var buffer = snd_pcm_uframes_t(frameSamples * bufferPeriods)
        try check(snd_pcm_hw_params_set_buffer_size_near(pcm, hardware, &buffer), "snd_pcm_hw_params_set_buffer_size_near")
        try check(snd_pcm_hw_params(pcm, hardware), "snd_pcm_hw_params")

        var software: OpaquePointer?
        guard snd_pcm_sw_params_malloc(&software) >= 0, let software else {
            throw ALSAError("snd_pcm_sw_params_malloc", device: device, code: -ENOMEM, message: String(cString: snd_strerror(-ENOMEM)))
        }
        defer { snd_pcm_sw_params_free(software) }
        try check(snd_pcm_sw_params_current(pcm, software), "snd_pcm_sw_params_current")
        // A wait ends when a whole 20 ms frame can move, whatever period the device took.
        try check(snd_pcm_sw_params_set_avail_min(pcm, software, snd_pcm_uframes_t(frameSamples)), "snd_pcm_sw_params_set_avail_min")
        // Playback starts with the first frame written (the engine fills the rest of the
        // buffer at once), so a frame never waits for the buffer to fill.
        try check(snd_pcm_sw_params_set_start_threshold(pcm, software, snd_pcm_uframes_t(frameSamples)), "snd_pcm_sw_params_set_start_threshold")
        try check(snd_pcm_sw_params(pcm, software), "snd_pcm_sw_params")
        try check(snd_pcm_prepare(pcm), "snd_pcm_prepare")
        return (Int(period), Int(buffer))
    }

    /// A copy of the system configuration with `definitions` loaded over it.
    private static func configuration(adding definitions: String, device: String) throws(ALSAError) -> OpaquePointer {
        var global: OpaquePointer?
        let updated = snd_config_update_ref(&global)
        guard updated >= 0, let global else {
            throw error("snd_config_update_ref", device: device, code: updated)
        }
        var copy: OpaquePointer?
        let copied = snd_config_copy(&copy, global)
        snd_config_unref(global)
        guard copied >= 0, let copy else {
            throw error("snd_config_copy", device: device, code: copied)
        }
        var input: OpaquePointer?
        let bytes = Array(definitions.utf8)
        let opened = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { snd_input_buffer_open(&input, $0.baseAddress, buffer.count) }
        }
        guard opened >= 0, let input else {
            snd_config_delete(copy)
            throw error("snd_input_buffer_open", device: device, code: opened)
        }
        let loaded = snd_config_load(copy, input)
        snd_input_close(input)
        guard loaded >= 0 else {
            snd_config_delete(copy)
            throw error("snd_config_load", device: device, code: loaded, hint: "the definitions do not parse")
        }
        return copy
    }

    /// An error for `code`, with what alsa-lib logged on this thread (while its log is
    /// caught) or else `hint`.
    static func error(_ operation: String, device: String, code: Int32, hint: String = "") -> ALSAError {
        let logged = String(cString: parley_alsa_last_log())
        return ALSAError(operation, device: device, code: code, message: String(cString: snd_strerror(code)),
                         detail: logged.isEmpty ? hint : logged)
    }
}

@available(*, unavailable, message: "one thread at a time: hand an ALSAPCM to one thread and use it there only")
extension ALSAPCM: Sendable {}
