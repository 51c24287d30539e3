import Foundation
@_spi(ParleyEngines) @testable import ParleySDKCore
import Testing

/// The audio controller's state and its delegate calls, over the test engines' audio.
@Suite struct ParleyAudioControllerTests {
    final class Log: ParleyAudioControllerDelegate, @unchecked Sendable {
        // @unchecked: `lines` is `Locked`.
        let lines = Locked<[String]>([])
        func audioControllerMuted(_ audioController: ParleyAudioController) { lines.withLock { $0.append("muted") } }
        func audioControllerUnmuted(_ audioController: ParleyAudioController) { lines.withLock { $0.append("unmuted") } }
        func audioControllerSpeakerEnabled(_ audioController: ParleyAudioController) { lines.withLock { $0.append("speaker on") } }
        func audioControllerSpeakerDisabled(_ audioController: ParleyAudioController) { lines.withLock { $0.append("speaker off") } }
    }

    @Test func muteAndSpeakerChangesReachTheDelegateOnceEachInOrder() throws {
        let engines = TestEngines.make()
        let callbacks = DispatchQueue(label: "test.callbacks")
        let client = try ParleyClient(applicationKey: "app-1", environmentHost: "http://127.0.0.1:9", userId: "alice",
                                      callbackQueue: callbacks, pushRegistrationStore: InMemoryPushRegistrationStore(), engines: engines)
        let log = Log()
        let audio = client.audioController
        audio.delegate = log
        audio.mute()
        audio.mute()                    // no change: no second call
        #expect(audio.isMuted)
        audio.enableSpeaker()
        #expect(audio.isSpeakerEnabled)
        let engine = try #require(engines.media.audio as? RecordingAudioEngine)
        engine.systemChangedRoute(speakerEnabled: false)   // headphones plugged in
        #expect(!audio.isSpeakerEnabled)
        audio.disableSpeaker()          // already off: nothing
        audio.unmute()
        // Delivered through the client's ordered deliveries, then the callback queue.
        for _ in 0..<200 where log.lines.current.count < 4 { Thread.sleep(forTimeInterval: 0.01) }
        callbacks.sync {}
        #expect(log.lines.current == ["muted", "speaker on", "speaker off", "unmuted"])
    }
}
