import Foundation
import ParleyCrypto
@_spi(ParleyEngines) @testable import ParleySDKCore
import ParleySignaling

/// Engines a test drives by hand, for whole `ParleyClient` flows without a network: the
/// transport opens at once, records every frame the client sends and delivers the frames
/// the test gives; each call's media succeeds at once and records the DTMF it is asked
/// to send.
final class ScriptedEngines: @unchecked Sendable {
    // @unchecked: mutable state is `Locked`.
    let transport = Locked<ScriptedTransport?>(nil)
    let media = ScriptedMediaEngine()

    var engines: ParleyEngines {
        ParleyEngines(transport: ScriptedTransportFactory(engines: self), media: media,
                      hmacSHA256: { key, message in try? Digest.hmac(.sha256, key: key, message) })
    }

    /// Every frame the client sent on its newest connection, decoded.
    var sent: [SignalingMessage] {
        (transport.current?.sent.current ?? []).compactMap { try? SignalingCodec.decode($0, sender: .deviceToServer) }
    }

    /// Hands `message` to the client as if the server sent it.
    func deliver(_ message: SignalingMessage) {
        transport.current?.deliver(message)
    }

    /// Waits (bounded, 5 s) until `condition` holds.
    func wait(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<500 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    /// The newest request of `type` the client sent.
    func lastRequest(_ type: SignalingMessageType) -> SignalingMessage? {
        sent.last { $0.type == type }
    }
}

struct ScriptedTransportFactory: ParleySignalingTransportFactory {
    let engines: ScriptedEngines
    func makeTransport(endpoint: ParleyServerEndpoint,
                       handler: @escaping @Sendable (ParleySignalingTransportEvent) -> Void) -> any ParleySignalingTransport {
        let transport = ScriptedTransport(handler: handler)
        engines.transport.withLock { $0 = transport }
        return transport
    }
}

final class ScriptedTransport: ParleySignalingTransport, Sendable {
    let handler: @Sendable (ParleySignalingTransportEvent) -> Void
    let sent = Locked<[String]>([])
    let finished = DispatchGroup()

    init(handler: @escaping @Sendable (ParleySignalingTransportEvent) -> Void) { self.handler = handler }

    func open() { handler(.opened(localHost: "127.0.0.1")) }
    func send(_ text: String) -> Bool {
        sent.withLock { $0.append(text) }
        return true
    }
    func close(code: UInt16) {}
    func deliver(_ message: SignalingMessage) { handler(.message(SignalingCodec.encode(message))) }
}

final class ScriptedMediaEngine: ParleyMediaEngine, Sendable {
    let audio: any ParleyAudioEngine = RecordingAudioEngine()
    /// The DTMF every call's media was asked to send, in order.
    let dtmfSent = Locked<[String]>([])
    func prepare() {}
    func makeCallMedia(callID: String, localHost: String?, source: ParleyAudioSource, sink: ParleyAudioSink) -> any ParleyCallMedia {
        ScriptedCallMedia(engine: self)
    }
}

final class ScriptedCallMedia: ParleyCallMedia, Sendable {
    let engine: ScriptedMediaEngine
    init(engine: ScriptedMediaEngine) { self.engine = engine }
    func makeOffer() async throws -> String { "v=0\r\no=offer\r\n" }
    func acceptAnswer(_ sdp: String) async throws {}
    func answer(offer: String) async throws -> String { "v=0\r\no=answer\r\n" }
    func start(withAudio: Bool) async throws {}
    func attachAudio() async throws {}
    func poll() async -> (statistics: ParleyCallStatistics, failure: String?)? { nil }
    func close() async -> ParleyCallStatistics? { nil }
    func sendDTMF(_ tones: String) async -> Bool {
        engine.dtmfSent.withLock { $0.append(tones) }
        return true
    }
}
