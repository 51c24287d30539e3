import CALSA
import Glibc

/// A PCM that ALSA's configuration names (`snd_device_name_hint`), for a device picker
/// such as `parley devices`.
public struct ALSADevice: Sendable, Hashable {
    /// The name to open, such as `default`, `sysdefault:CARD=PCH` or `plughw:CARD=PCH,DEV=0`.
    public let name: String
    /// ALSA's description, possibly several lines (card, then device), or empty.
    public let description: String
    /// Whether the PCM records (false when ALSA says it is output only).
    public let canCapture: Bool
    /// Whether the PCM plays (false when ALSA says it is input only).
    public let canPlay: Bool

    /// The PCMs ALSA's configuration lists for every card, in ALSA's order. Listed does
    /// not mean usable: opening one may still fail (busy, or no such card on this
    /// machine). Empty if ALSA cannot list at all.
    public static func all() -> [ALSADevice] {
        let previousLog = parley_alsa_catch_log()
        defer { parley_alsa_restore_log(previousLog) }
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) >= 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        func hint(_ entry: UnsafeMutableRawPointer, _ id: String) -> String? {
            guard let text = snd_device_name_get_hint(entry, id) else { return nil }
            defer { free(text) }
            return String(cString: text)
        }
        var devices: [ALSADevice] = []
        var index = 0
        while let entry = hints[index] {
            index += 1
            guard let name = hint(entry, "NAME") else { continue }
            // IOID is absent for a PCM that goes both ways.
            let direction = hint(entry, "IOID")
            devices.append(ALSADevice(name: name, description: hint(entry, "DESC") ?? "",
                                      canCapture: direction != "Output", canPlay: direction != "Input"))
        }
        return devices
    }
}
