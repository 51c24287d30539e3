import AVFAudio
import CryptoKit
import Foundation
import ParleyMediaCore
import ParleySDK
import ParleySDKAppleChecked
import ParleySDKCore
import Testing
import WebRTC

/// The Apple media engine (libwebrtc's API, here the functional WebRTC mirror over our
/// media leg) in a real `ParleyClient`, calling and called by the real `parley` softphone
/// through a real `parleyd`, all on loopback. The client's signaling is the Linux transport
/// (URLSession has no WebSocket on Linux); its media and HMAC are the Apple engines'.
/// Serialized: libwebrtc's audio session (and so the mirror's device) is one per process.
@Suite(.serialized) struct AppleMediaEngineCallTests {
    @Test func theAppleClientCallsTheSoftphoneWithCallKitGatingAndMute() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: BuiltProducts.parleyd.path), "build the root package first (make build)")
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bobHears = directory.appendingPathComponent("bob-hears.wav").path
        let session = RTCAudioSession.sharedInstance()
        session.mirrorReset()
        session.mirrorDevice.source = ToneSource(frequency: 440, amplitude: 0.3)
        session.mirrorDevice.sink = WAVFileSink(sampleRate: 48_000)

        let server = try ParleydInstance()
        let bob = try SoftphoneProcess.listen("listen bob", on: server, as: "bob", ["--answer", "--tone", "1000", "--record", bobHears])
        let (client, events) = try Self.client(as: "alice", on: server, media: AppleMediaEngine(usesCallKitAudioSession: true))
        #expect(session.useManualAudio && !session.isAudioEnabled, "CallKit's way: no audio unit until the system activates the session")
        client.start()
        try await events.wait(for: "started")

        // The Sinch guide's call before fulfilling CallKit's start action.
        client.audioController.configureAudioSessionForCallKitCall()
        #expect(session.category == AVAudioSession.Category.playAndRecord.rawValue && session.mode == AVAudioSession.Mode.voiceChat.rawValue)
        let call = try client.callClient.callUser(withId: "bob").get()
        call.delegate = events
        try await events.wait(for: "established")
        // Connected, but the system has not activated the audio session: nothing captured or played.
        try await Task.sleep(for: .seconds(1))
        #expect(session.mirrorDevice.framesCaptured == 0 && session.mirrorDevice.framesPlayed == 0,
                "captured \(session.mirrorDevice.framesCaptured), played \(session.mirrorDevice.framesPlayed) before activation")
        #expect(!client.audioController.isAudioSessionActive)

        // The Sinch guide's call from CallKit's provider(_:didActivate:).
        client.callClient.didActivate(audioSession: AVAudioSession.sharedInstance())
        #expect(session.isAudioEnabled && client.audioController.isAudioSessionActive)
        try await Task.sleep(for: .seconds(3))
        #expect(session.mirrorDevice.framesCaptured > 100 && session.mirrorDevice.framesPlayed > 100)
        client.audioController.delegate = events
        client.audioController.enableSpeaker()
        #expect(session.mirrorPortOverride == .speaker)
        // The system moves the output to headphones: the controller's delegate hears the
        // loudspeaker went off, once (the engine's own override was not reported again).
        session.mirrorSystemChangesRoute(to: [.headphones], reason: .newDeviceAvailable)
        try await events.wait(for: "speaker off")
        #expect(!client.audioController.isSpeakerEnabled)
        #expect(events.seen.filter { $0.hasPrefix("speaker") } == ["speaker on", "speaker off"], "\(events.seen)")
        // A change with the reason `override` is an app's own doing: not reported as the system's.
        session.mirrorSystemChangesRoute(to: [.builtInSpeaker], reason: .override)
        try await Task.sleep(for: .milliseconds(300))
        #expect(events.seen.filter { $0.hasPrefix("speaker") } == ["speaker on", "speaker off"], "\(events.seen)")
        client.audioController.enableSpeaker()
        client.audioController.disableSpeaker()
        #expect(session.mirrorPortOverride == AVAudioSession.PortOverride.none)

        // DTMF applies to calls to phone numbers and SIP addresses only, as in the documented
        // SDK: on this app-to-app call it sends nothing.
        #expect(!call.sendDTMF("1#"), "DTMF on an app-to-app call")

        // Mute: the track is disabled, libwebrtc (the mirror) sends silence.
        client.audioController.mute()
        try await Task.sleep(for: .seconds(2))
        let statistics = call.statistics
        call.hangup()
        try await events.wait(for: "ended")
        #expect(try bob.waitForExit(timeout: 20) == 0, "\(bob.report)")
        client.callClient.didDeactivate(audioSession: AVAudioSession.sharedInstance())
        #expect(!session.isAudioEnabled)

        // Alice (the Apple engine) heard bob's 1000 Hz; bob heard her 440 Hz, then silence.
        let heard = try #require(session.mirrorDevice.sink as? WAVFileSink).file.samples
        let aliceFrequency = FrequencyAnalysis.dominantFrequency(samples: Array(heard.prefix(48_000 * 3).suffix(48_000 * 2)), sampleRate: 48_000) ?? 0
        #expect(abs(aliceFrequency - 1000) < 15, "the Apple client heard \(aliceFrequency) Hz")
        let levels = try Self.toneLevels(path: bobHears, frequency: 440)
        let toneFrames = levels.filter { $0 > -45 }.count
        #expect(toneFrames > 100, "bob heard the tone in \(toneFrames) frames")
        // The last second but the final half second: well after the mute, before the end.
        let muted = levels.dropLast(25).suffix(50)
        #expect(muted.count == 50 && muted.allSatisfy { $0 < -45 }, "muted tail levels: \(muted.map { Int($0) })")

        #expect(statistics.packetsSent > 100 && statistics.packetsReceived > 100, "\(statistics)")
        client.terminateGracefully()
    }

    /// DTMF through the Apple engine's `RTCDtmfSender`, on a call to a SIP address (the
    /// documented SDK sends DTMF on phone and SIP calls only): parleyd's gateway receives
    /// each tone on the app's leg as an RFC 4733 event, begun and ended, in order. The far
    /// side is SIPp, echoing the RTP it receives.
    @Test func theAppleClientSendsDTMFOnACallToASIPAddress() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: BuiltProducts.parleyd.path), "build the root package first (make build)")
        let session = RTCAudioSession.sharedInstance()
        session.mirrorReset()
        session.mirrorDevice.source = ToneSource(frequency: 440, amplitude: 0.3)
        let peer = try SIPpPeer(echo: true)
        let server = try ParleydInstance(flags: ["--sip-listen", "127.0.0.1:0", "--sip-route", "pbx.test=\(peer.address)"])
        try server.admin(["set-dialling", server.applicationKey, "--sip", "on"])
        let (client, events) = try Self.client(as: "alice", on: server, media: AppleMediaEngine(usesCallKitAudioSession: false))
        client.start()
        try await events.wait(for: "started")
        let call = try client.callClient.callSIP("bob@pbx.test").get()
        call.delegate = events
        try await events.wait(for: "established")
        #expect(call.sendDTMF("1#"))
        #expect(!call.sendDTMF("1x"), "not DTMF")
        #expect(!call.sendDTMF(""), "no tones")
        let lines = try await Self.waitForLines(in: server, containing: "media.dtmf.received", count: 4)
        call.hangup()
        try await events.wait(for: "ended")
        #expect(try peer.waitForExit(timeout: 20) == 0, "\(peer.report)")
        // parleyd's logfmt lines: each tone once as it begins and once as it ends, in order.
        let dtmf = lines.map { line in
            ["event", "end"].map { key in
                line.split(separator: " ").first { $0.hasPrefix("\(key)=") }.map { String($0.dropFirst(key.count + 1)) } ?? "?"
            }.joined(separator: " ")
        }
        #expect(dtmf == ["1 false", "1 true", "# false", "# true"], "\(lines)")
        client.terminateGracefully()
    }

    @Test func theSoftphoneCallsTheAppleClient() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: BuiltProducts.parleyd.path), "build the root package first (make build)")
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let aliceHears = directory.appendingPathComponent("alice-hears.wav").path
        let session = RTCAudioSession.sharedInstance()
        session.mirrorReset()
        session.mirrorDevice.source = ToneSource(frequency: 1000, amplitude: 0.3)
        session.mirrorDevice.sink = WAVFileSink(sampleRate: 48_000)

        let server = try ParleydInstance()
        // Without CallKit: libwebrtc runs its audio unit as soon as a call has audio.
        let (client, events) = try Self.client(as: "bob", on: server, media: AppleMediaEngine(usesCallKitAudioSession: false))
        events.answersIncomingCalls = true
        client.callClient.delegate = events
        client.start()
        try await events.wait(for: "started")
        #expect(!session.useManualAudio && client.audioController.isAudioSessionActive)

        let alice = try SoftphoneProcess.call("bob", on: server, as: "alice", ["--duration", "4", "--tone", "440", "--record", aliceHears])
        try await events.wait(for: "established")
        #expect(try alice.waitForExit(timeout: 30) == 0, "\(alice.report)")
        try await events.wait(for: "ended")

        let heard = try #require(session.mirrorDevice.sink as? WAVFileSink).file.samples
        let bobFrequency = FrequencyAnalysis.dominantFrequency(samples: Array(heard.suffix(48_000 * 2)), sampleRate: 48_000) ?? 0
        #expect(abs(bobFrequency - 440) < 15, "the Apple client heard \(bobFrequency) Hz")
        let analysis = try RecordingAnalysis(path: aliceHears, expectedFrequency: 1000)
        #expect(abs((analysis.dominantFrequency ?? 0) - 1000) < 15, "alice heard \(analysis.dominantFrequency ?? 0) Hz")
        #expect(analysis.audibleSeconds >= 3, "alice heard \(analysis.audibleSeconds) s")
        client.terminateGracefully()
    }

    /// The server vanishes mid-call: the connection's ICE consent runs out, libwebrtc (the
    /// mirror) reports the connection `.failed` to the engine's delegate, and the client
    /// ends the call with `media_failed`, before its signaling gives up resuming.
    @Test func aFailedConnectionEndsTheCallWithMediaFailed() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: BuiltProducts.parleyd.path), "build the root package first (make build)")
        let session = RTCAudioSession.sharedInstance()
        session.mirrorReset()
        RTCPeerConnectionFactory.mirrorConsentTimeout = .seconds(2)
        defer { RTCPeerConnectionFactory.mirrorConsentTimeout = .seconds(30) }

        let server = try ParleydInstance()
        let bob = try SoftphoneProcess.listen("listen bob", on: server, as: "bob", ["--answer"])
        let (client, events) = try Self.client(as: "alice", on: server, media: AppleMediaEngine(usesCallKitAudioSession: false))
        client.start()
        try await events.wait(for: "started")
        let call = try client.callClient.callUser(withId: "bob").get()
        call.delegate = events
        try await events.wait(for: "established")
        server.killHard()
        try await events.wait(for: "ended")
        #expect(call.details.error?.code == "media_failed", "\(String(describing: call.details.error))")
        #expect(call.details.error?.message.contains("ICE or DTLS") == true, "\(String(describing: call.details.error))")
        bob.process.killHard()
        client.terminateGracefully()
    }

    // MARK: Helpers

    /// A client with the Linux signaling transport, `media`, and CryptoKit's HMAC (as
    /// `AppleEngines` has), signed in with tokens `parley token` mints.
    static func client(as user: String, on server: ParleydInstance, media: any ParleyMediaEngine) throws -> (ParleyClient, ClientEvents) {
        let endpoint = try ParleyServerEndpoint(parsing: server.serverURL)
        let linux = try LinuxEngines.make(for: endpoint, caFile: nil)
        let engines = ParleyEngines(transport: linux.transport, media: media, hmacSHA256: { key, message in
            Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
        })
        let store = server.dataDirectory.appendingPathComponent("\(user)-push.json")
        let client = try ParleyClient(applicationKey: server.applicationKey, environmentHost: server.serverURL, userId: user,
                                      deviceId: "\(user)-device", callbackQueue: DispatchQueue(label: "apple-check-\(user)"),
                                      pushRegistrationStore: FilePushRegistrationStore(url: store), engines: engines)
        client.audioController.source = .device
        client.audioController.sink = .device
        let events = ClientEvents(server: server)
        client.delegate = events
        return (client, events)
    }

    /// parleyd's output lines containing `text`, once there are `count` (bounded: 5 s).
    static func waitForLines(in server: ParleydInstance, containing text: String, count: Int) async throws -> [String] {
        let deadline = Date().addingTimeInterval(5)
        var lines: [String] = []
        repeat {
            lines = (server.process?.report ?? "").split(separator: "\n").map(String.init).filter { $0.contains(text) }
            if lines.count >= count { return lines }
            try await Task.sleep(for: .milliseconds(50))
        } while Date() < deadline
        return lines
    }

    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("apple-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// The level of `frequency` in each 20 ms frame of a WAV recording (dBFS).
    static func toneLevels(path: String, frequency: Double) throws -> [Double] {
        let wav = try WAVFile.read(path: path)
        let frame = wav.sampleRate / 50
        return stride(from: 0, to: wav.samples.count - frame + 1, by: frame).map {
            FrequencyAnalysis.toneLevelDBFS(samples: Array(wav.samples[$0..<$0 + frame]), sampleRate: wav.sampleRate, frequency: frequency)
        }
    }
}

/// The client's and the call's events as words the test waits for, and tokens on demand.
final class ClientEvents: ParleyClientDelegate, ParleyCallClientDelegate, ParleyCallDelegate, ParleyAudioControllerDelegate,
                          @unchecked Sendable {
    // @unchecked: `events` and `answers` are behind `lock`; `server` is immutable.
    private let lock = NSLock()
    private var events: [String] = []
    private var answers = false
    private let server: ParleydInstance

    init(server: ParleydInstance) { self.server = server }

    var answersIncomingCalls: Bool {
        get { lock.withLock { answers } }
        set { lock.withLock { answers = newValue } }
    }

    private func note(_ event: String) { lock.withLock { events.append(event) } }

    /// Everything noted so far, in order.
    var seen: [String] { lock.withLock { events } }

    /// Waits (at most 20 s) until `event` has happened.
    func wait(for event: String) async throws {
        for _ in 0..<2000 {
            if seen.contains(event) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("no '\(event)' within 20 s; seen: \(seen)")
        throw CancellationError()
    }

    func clientRequiresRegistrationCredentials(_ client: ParleyClient, withCallback callback: ParleyClientRegistration) {
        do { callback.register(withJWT: try server.mintToken(as: client.userId)) } catch { callback.registerDidFail(error: error) }
    }

    func clientDidStart(_ client: ParleyClient) { note("started") }
    func clientDidFail(_ client: ParleyClient, error: any Error) { note("failed \(error)") }

    func client(_ client: ParleyCallClient, didReceiveIncomingCall call: ParleyCall) {
        call.delegate = self
        note("incoming")
        if answersIncomingCalls { call.answer() }
    }

    func audioControllerSpeakerEnabled(_ audioController: ParleyAudioController) { note("speaker on") }
    func audioControllerSpeakerDisabled(_ audioController: ParleyAudioController) { note("speaker off") }

    func callDidEstablish(_ call: ParleyCall) { note("established") }
    func callDidEnd(_ call: ParleyCall) { note("ended") }
}
