import Foundation
import ParleyCrypto
@_spi(ParleyEngines) @testable import ParleySDKCore

/// Engines for core tests that never reach a server or a media leg. They behave as the
/// Linux engines do where a test can meet them: a connection to nowhere fails once with a
/// message (as a refused TCP connect does), media cannot be made (as `.device` on Linux),
/// the audio engine keeps its state, and the HMAC is OpenSSL's, so push payloads are
/// verified for real.
enum TestEngines {
    static func make() -> ParleyEngines {
        ParleyEngines(transport: UnreachableTransportFactory(), media: NoMediaEngine(),
                      hmacSHA256: { key, message in try? Digest.hmac(.sha256, key: key, message) })
    }
}

struct UnreachableTransportFactory: ParleySignalingTransportFactory {
    func makeTransport(endpoint: ParleyServerEndpoint,
                       handler: @escaping @Sendable (ParleySignalingTransportEvent) -> Void) -> any ParleySignalingTransport {
        UnreachableTransport(endpoint: endpoint, handler: handler)
    }
}

final class UnreachableTransport: ParleySignalingTransport, Sendable {
    let endpoint: ParleyServerEndpoint
    let handler: @Sendable (ParleySignalingTransportEvent) -> Void
    let finished = DispatchGroup()

    init(endpoint: ParleyServerEndpoint, handler: @escaping @Sendable (ParleySignalingTransportEvent) -> Void) {
        self.endpoint = endpoint
        self.handler = handler
    }

    func open() {
        finished.enter()
        DispatchQueue.global().async { [self] in
            handler(.failed("\(endpoint.webSocketURL): connection refused"))
            finished.leave()
        }
    }

    func send(_ text: String) -> Bool { false }
    func close(code: UInt16) {}
}

final class NoMediaEngine: ParleyMediaEngine, Sendable {
    let audio: any ParleyAudioEngine = RecordingAudioEngine()
    func prepare() {}
    func makeCallMedia(callID: String, localHost: String?, source: ParleyAudioSource, sink: ParleyAudioSink) -> any ParleyCallMedia {
        NoCallMedia()
    }
}

struct NoMediaError: Error, CustomStringConvertible {
    var description: String { "no media engine in this test" }
}

final class NoCallMedia: ParleyCallMedia, Sendable {
    func makeOffer() async throws -> String { throw NoMediaError() }
    func acceptAnswer(_ sdp: String) async throws { throw NoMediaError() }
    func answer(offer: String) async throws -> String { throw NoMediaError() }
    func start(withAudio: Bool) async throws { throw NoMediaError() }
    func attachAudio() async throws { throw NoMediaError() }
    func poll() async -> (statistics: ParleyCallStatistics, failure: String?)? { nil }
    func close() async -> ParleyCallStatistics? { nil }
    func sendDTMF(_ tones: String) async -> Bool { false }
}

/// Keeps mute and session state as the platform's engine would; sound files are checked
/// for existence only (decoding is the Linux engine's, tested there).
final class RecordingAudioEngine: ParleyAudioEngine, Sendable {
    private let muted = Locked(false)
    private let active = Locked(true)
    let soundFile = Locked<String?>(nil)

    var isMuted: Bool { muted.current }
    func setMuted(_ muted: Bool) { self.muted.withLock { $0 = muted } }
    var isSessionActive: Bool { active.current }
    func setSessionActive(_ active: Bool) { self.active.withLock { $0 = active } }
    func startPlayingSoundFile(withPath path: String, looping: Bool) throws(ParleyClientError) {
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw ParleyClientError(code: "invalid_argument", message: "cannot read WAV file \(path)")
        }
        soundFile.withLock { $0 = path }
    }
    func stopPlayingSoundFile() { soundFile.withLock { $0 = nil } }
    private let speaker = Locked(false)
    private let routeObserver = Locked<(@Sendable (Bool) -> Void)?>(nil)
    var isSpeakerEnabled: Bool { speaker.current }
    func setSpeakerEnabled(_ enabled: Bool) { speaker.withLock { $0 = enabled } }
    func observeRouteChanges(_ observer: @escaping @Sendable (Bool) -> Void) { routeObserver.withLock { $0 = observer } }
    /// What the system does when headphones come or go: the route changes under the app.
    func systemChangedRoute(speakerEnabled: Bool) {
        speaker.withLock { $0 = speakerEnabled }
        routeObserver.current?(speakerEnabled)
    }
}
