/// Hears the audio controller's changes, on the client's `callbackQueue`: the app's own
/// `mute()`/`enableSpeaker()` calls, and route changes the system makes (headphones
/// plugged in). Every method has an empty default.
public protocol ParleyAudioControllerDelegate: AnyObject {
    /// Calls now send silence.
    func audioControllerMuted(_ audioController: ParleyAudioController)
    /// Calls send the source's audio again.
    func audioControllerUnmuted(_ audioController: ParleyAudioController)
    /// Call audio now plays through the loudspeaker.
    func audioControllerSpeakerEnabled(_ audioController: ParleyAudioController)
    /// Call audio left the loudspeaker.
    func audioControllerSpeakerDisabled(_ audioController: ParleyAudioController)
}

extension ParleyAudioControllerDelegate {
    /// Does nothing.
    public func audioControllerMuted(_ audioController: ParleyAudioController) {}
    /// Does nothing.
    public func audioControllerUnmuted(_ audioController: ParleyAudioController) {}
    /// Does nothing.
    public func audioControllerSpeakerEnabled(_ audioController: ParleyAudioController) {}
    /// Does nothing.
    public func audioControllerSpeakerDisabled(_ audioController: ParleyAudioController) {}
}
