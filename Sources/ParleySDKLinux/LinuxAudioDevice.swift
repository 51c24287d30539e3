/// Which ALSA device a Linux client's `.device` calls use: a PCM name (`default`,
/// `plughw:1`, `pulse`, or one the ALSA configuration defines) and, optionally, ALSA
/// configuration text that defines it (for devices made up on the spot, such as a file
/// plugin in tests). Capture and playback open the same name.
public struct LinuxAudioDevice: Sendable, Hashable {
    /// The ALSA PCM name.
    public var name: String
    /// ALSA configuration text loaded before the name is looked up, if any.
    public var definitions: String?

    /// The system's default capture and playback device.
    public static let systemDefault = LinuxAudioDevice(name: "default")

    /// A device by name, optionally defined by `definitions`.
    public init(name: String, definitions: String? = nil) {
        self.name = name
        self.definitions = definitions
    }
}
