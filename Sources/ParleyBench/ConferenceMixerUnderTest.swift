import ParleyNetCore

/// A conference mixer the `conference` group measures: each is a process of its own whose
/// CPU is read from /proc, taking plain-RTP participants so the load generator pays for no
/// DTLS. Janus's AudioBridge is one, parleyd itself (`ParleydConferenceRoom`) the other; the
/// report prints both side by side on the same load, with their ratio.
protocol ConferenceMixerUnderTest: AnyObject {
    /// Its name in the report.
    var name: String { get }

    /// User plus system CPU seconds of its process (or processes) so far.
    func cpuSeconds() -> Double

    /// Opens a room mixing at `settings.sampleRate` and joins one participant per address
    /// in `participants` (where the mixer sends that participant's mix); per participant,
    /// where the mixer receives its RTP. One room at a time.
    func openRoom(participants: [SocketAddress], settings: ConferenceCodecSettings) throws -> [SocketAddress]

    /// The mixer's own tick lateness over the last `seconds` (p50 and p99, in seconds), when
    /// it reports one; nil for a mixer that does not (Janus).
    func tickLateness(overLast seconds: Double) -> (p50: Double, p99: Double)?

    /// A line on the step just measured that only this mixer can tell (its own counters);
    /// nil for none. Read after `tickLateness`.
    func stepNote() -> String?

    /// Closes the room opened last; its participants are dropped.
    func closeRoom() throws

    /// Stops the mixer's process.
    func stop()
}

/// The mixers the `conference` group knows how to start.
enum ConferenceMixerKind: String, CaseIterable {
    case janus
    /// parleyd itself, its participants phones calling a room's number over SIP
    /// (`ParleydConferenceRoom`).
    case parley

    /// Starts one with its files in `directory`, ready for rooms with `settings` (parleyd
    /// takes a room's rate and complexity at start); throws with the reason when it cannot run.
    func start(directory: String, settings: ConferenceCodecSettings) throws -> any ConferenceMixerUnderTest {
        switch self {
        case .janus:
            return try JanusAudioBridge(directory: directory)
        case .parley:
            return try ParleydConferenceRoom(sampleRate: settings.sampleRate, complexity: settings.complexity)
        }
    }
}
