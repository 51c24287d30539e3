/// A failed ALSA operation: what was being done, on which device, alsa-lib's error code
/// and its text, such as
/// `ALSA playback device "nosuchdevice": snd_pcm_open failed: No such file or directory (Unknown PCM nosuchdevice)`.
public struct ALSAError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The alsa-lib function (or engine step) that failed, such as `snd_pcm_open`.
    public let operation: String
    /// The device name as given, such as `default` or `plughw:1`.
    public let device: String
    /// alsa-lib's negative errno (`-ENOENT`...), or 0 when the failure is not alsa-lib's.
    public let code: Int32
    /// `snd_strerror(code)`, or the engine's own explanation when `code` is 0.
    public let message: String
    /// What alsa-lib logged about it on this thread (often more precise than `message`:
    /// "Unknown PCM nosuchdevice" where `message` says "No such file or directory"), or
    /// a hint of ours; empty if neither.
    public let detail: String

    init(_ operation: String, device: String, code: Int32, message: String, detail: String = "") {
        self.operation = operation
        self.device = device
        self.code = code
        self.message = message
        self.detail = detail
    }

    public var description: String {
        "ALSA device \"\(device)\": \(operation) failed: \(message)" + (detail.isEmpty ? "" : " (\(detail))")
    }
}
