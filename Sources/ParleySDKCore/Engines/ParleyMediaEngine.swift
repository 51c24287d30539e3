/// Makes each call's media: one audio leg to the server (ICE, DTLS-SRTP, Opus) with the
/// audio the client's controller configures.
public protocol ParleyMediaEngine: AnyObject, Sendable {
    /// One-time set-up of the media libraries; the client calls it at `start()` off its
    /// own queues, so the first call does not pay for it mid-handshake.
    func prepare()
    /// The audio shared by every call: mute, a sound file over the output, whether the
    /// system lets audio run. The client's `audioController` forwards to it.
    var audio: any ParleyAudioEngine { get }
    /// A new call's media, not started. `localHost` is this side's address on the
    /// signaling connection (where the leg should bind), if the transport said.
    func makeCallMedia(callID: String, localHost: String?, source: ParleyAudioSource,
                       sink: ParleyAudioSink) -> any ParleyCallMedia
}

/// One call's media leg. The client calls these one after another (never two at once),
/// in one of two orders: caller `makeOffer`, `acceptAnswer`, `start(withAudio: true)`;
/// callee `answer(offer:)`, `start(withAudio:)` (false while the call rings, then
/// `attachAudio()` at the answer). `close()` may come at any point and ends it.
public protocol ParleyCallMedia: AnyObject, Sendable {
    /// The SDP offer of a new leg (the caller's side).
    func makeOffer() async throws -> String
    /// Takes the server's SDP answer to `makeOffer()`.
    func acceptAnswer(_ sdp: String) async throws
    /// A new leg that answers the server's `offer`; returns the SDP answer.
    func answer(offer: String) async throws -> String
    /// Starts ICE, DTLS and the audio; `withAudio: false` connects without sending or
    /// playing anything until `attachAudio()`.
    func start(withAudio: Bool) async throws
    /// Gives a leg started without audio its source and sink.
    func attachAudio() async throws
    /// The leg's figures now, and why it failed if it has (nil while it works).
    func poll() async -> (statistics: ParleyCallStatistics, failure: String?)?
    /// Closes the leg (and writes a `.wavFile` recording); returns its last figures, nil
    /// if no leg was ever made.
    func close() async -> ParleyCallStatistics?
    /// Sends `tones` (`0-9 * # A-D`) to the server as RFC 4733 telephone events, one after
    /// another; returns once they are sent, false if nothing could be (no connected leg,
    /// no telephone events negotiated, a tone that is not DTMF).
    func sendDTMF(_ tones: String) async -> Bool
}

/// The platform's audio shared by every call.
public protocol ParleyAudioEngine: AnyObject, Sendable {
    /// Whether calls send silence instead of their source.
    var isMuted: Bool { get }
    /// Mutes or unmutes every call.
    func setMuted(_ muted: Bool)
    /// Whether call audio runs (false while a system call integration holds the audio
    /// session inactive: nothing is sent or played).
    var isSessionActive: Bool { get }
    /// The system activated or deactivated the audio session.
    func setSessionActive(_ active: Bool)
    /// Plays a WAV file into the local output of every call, over the call audio.
    /// - Throws: `ParleyClientError` `invalid_argument` if the file cannot be played.
    func startPlayingSoundFile(withPath path: String, looping: Bool) throws(ParleyClientError)
    /// Stops the sound file.
    func stopPlayingSoundFile()
    /// Whether call audio plays through the loudspeaker rather than the receiver.
    var isSpeakerEnabled: Bool { get }
    /// Routes call audio to the loudspeaker (true) or back to the default route.
    func setSpeakerEnabled(_ enabled: Bool)
    /// Tells `observer` when the system changes the route on its own (headphones plugged
    /// in, a Bluetooth device, another app), with whether the loudspeaker is in use.
    func observeRouteChanges(_ observer: @escaping @Sendable (_ speakerEnabled: Bool) -> Void)
}
