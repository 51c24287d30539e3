extension ParleyAudioController {
    /// Whether call audio runs. Always true without a system call integration; with one,
    /// only between the system's activation and deactivation of the audio session.
    public var isAudioSessionActive: Bool { engine.isSessionActive }

    /// The system activated (true) or deactivated (false) the audio session.
    func setSystemAudioSessionActive(_ active: Bool) {
        engine.setSessionActive(active)
    }
}
