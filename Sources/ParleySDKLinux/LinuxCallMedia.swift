import Foundation
@_spi(ParleyEngines) import ParleySDKCore
import ParleyCrypto
import ParleyMediaCore
import ParleyMediaLegCore
import ParleyAudioDeviceLinux
import ParleyMediaLegIO
import ParleyNetCore
import ParleyNetLinux
import Synchronization

/// One call's media on Linux: a full ICE (controlling) `MediaLeg`, Opus only, with the
/// configured source and sink mixed through the engine's shared audio state.
final class LinuxCallMedia: ParleyCallMedia, Sendable {
    let callID: String
    private let leg = Mutex<MediaLeg?>(nil)
    private let loop: EventLoop?
    private let bindAddress: SocketAddress
    private let source: ParleyAudioSource
    private let sink: ParleyAudioSink
    private let mix: AudioMixState
    private let device: LinuxAudioDevice
    /// The ALSA capture and playback of a `.device` call, started with its audio and
    /// stopped at its close.
    private let deviceIO = Mutex<(capture: ALSACaptureSource?, playback: ALSAPlaybackSink?)>((nil, nil))
    private let recording: CallRecording
    private let timeline = CallAudioTimeline(wallClock: { SystemClock.now().unixNanoseconds })
    private let closed = Atomic<Bool>(false)

    init(callID: String, loop: EventLoop?, bindingTo address: SocketAddress, source: ParleyAudioSource,
         sink: ParleyAudioSink, mix: AudioMixState, device: LinuxAudioDevice) {
        self.callID = callID
        self.loop = loop
        bindAddress = address
        self.source = source
        self.sink = sink
        self.mix = mix
        self.device = device
        if case .wavFile = sink { recording = CallRecording(keepsSamples: true) } else { recording = CallRecording(keepsSamples: false) }
    }

    private var currentLeg: MediaLeg? { leg.withLock { $0 } }

    func makeOffer() async throws -> String {
        try await makeLeg().makeOffer()
    }

    func acceptAnswer(_ sdp: String) async throws {
        guard let leg = currentLeg else { throw MediaLegError(.state, "no leg to take the answer") }
        try await leg.acceptAnswer(sdp)
    }

    func answer(offer: String) async throws -> String {
        try await makeLeg().answer(offer: offer)
    }

    /// Starts ICE, DTLS and the pacer, with the configured source and sink or, for a
    /// ringing call's leg (`withAudio: false`), with none until `attachAudio()`.
    func start(withAudio: Bool) async throws {
        guard let leg = currentLeg else { return }
        if withAudio {
            let (source, sink) = try makeAudio()
            try await leg.start(source: source, sink: sink)
        } else {
            try await leg.start()
        }
    }

    func attachAudio() async throws {
        guard let leg = currentLeg else { return }
        let (source, sink) = try makeAudio()
        await leg.attach(source: source, sink: sink)
    }

    func poll() async -> (statistics: ParleyCallStatistics, failure: String?)? {
        guard !closed.load(ordering: .acquiring), let leg = currentLeg else { return nil }
        let figures = statistics(await leg.statistics)
        guard await leg.state == .failed else { return (figures, nil) }
        return (figures, await leg.failure.map { "\($0)" } ?? "the media leg failed")
    }

    /// Closes the leg and writes the recording; returns the leg's last statistics.
    func close() async -> ParleyCallStatistics? {
        closed.store(true, ordering: .releasing)
        defer { stopDevice() }
        guard let leg = currentLeg else { return nil }
        await leg.close()
        let statistics = self.statistics(await leg.statistics)
        if case .wavFile(let path) = sink {
            try? WAVFile(sampleRate: 48_000, channels: 1, samples: recording.samples.current).write(path: path)
        }
        return statistics
    }

    /// Paced RFC 4733 events on the leg (`MediaLeg.sendDTMF`'s 100 ms tones, 70 ms gaps).
    func sendDTMF(_ tones: String) async -> Bool {
        guard !closed.load(ordering: .acquiring), let leg = currentLeg else { return false }
        return await leg.sendDTMF(tones)
    }

    /// A full ICE (controlling) leg, Opus only, bound to the address that reaches the server.
    private func makeLeg() throws -> MediaLeg {
        guard let loop else { throw MediaLegError(.socket, "no event loop for media") }
        var configuration = MediaLegConfiguration(iceMode: .full, certificate: try DTLSCertificate.generate())
        configuration.codecs = [.opus]
        let created = try MediaLeg(configuration: configuration, bindingTo: [bindAddress], on: loop)
        leg.withLock { $0 = created }
        return created
    }

    /// The call's source and sink; `.device` opens and starts the ALSA device (throwing
    /// `ALSAError` at once when it cannot be opened: no such device, busy, no 48 kHz mono).
    private func makeAudio() throws -> (any AudioSource & Sendable, any AudioSink & Sendable) {
        let audio: any AudioSource & Sendable
        switch source {
        case .tone(let frequency): audio = ToneSource(frequency: frequency, amplitude: 0.3)
        case .wavFile(let path, let looping): audio = SoundFileSource(try SoundFile(path: path, looping: looping))
        case .silence: audio = SilenceSource()
        case .device:
            let capture = ALSACaptureSource(device: device.name, definitions: device.definitions)
            try capture.start()
            deviceIO.withLock { $0.capture = capture }
            audio = capture
        }
        var output: (any AudioSink & Sendable)?
        if sink == .device {
            let playback = ALSAPlaybackSink(device: device.name, definitions: device.definitions)
            do { try playback.start() } catch {
                stopDevice()
                throw error
            }
            deviceIO.withLock { $0.playback = playback }
            output = playback
        }
        return (MutableSource(audio, state: mix, timeline: timeline),
                MixingSink(state: mix, recording: recording, timeline: timeline, output: output))
    }

    /// Stops the device threads and closes the ALSA devices (nothing if none were opened).
    private func stopDevice() {
        let (capture, playback) = deviceIO.withLock { io in
            defer { io = (nil, nil) }
            return io
        }
        capture?.stop()
        playback?.stop()
    }

    /// The SDK's figures of this call's leg statistics, with when its audio began.
    func statistics(_ s: MediaLegStatistics) -> ParleyCallStatistics {
        var figures = Self.statistics(s)
        figures.audioCaptureStartedAt = timeline.captureStarted.current.map { Date(timeIntervalSince1970: Double($0) / 1e9) }
        figures.audioPlayoutStartedAt = timeline.playoutStarted.current.map { Date(timeIntervalSince1970: Double($0) / 1e9) }
        return figures
    }

    /// The SDK's figures of a leg's statistics: the one place they are mapped.
    static func statistics(_ s: MediaLegStatistics) -> ParleyCallStatistics {
        ParleyCallStatistics(packetsSent: s.rtp.packetsSent, packetsReceived: s.rtp.packetsReceived,
                             packetsLost: s.rtp.inboundCumulativeLost, jitterMilliseconds: s.rtp.inboundJitterMilliseconds,
                             roundTripTimeMilliseconds: s.rtp.roundTripTimeMilliseconds,
                             framesPlayed: s.framesPlayedFromPackets, framesFECRecovered: s.playout.fecRecovered,
                             framesConcealed: s.framesConcealed, framesComfortNoise: s.playout.comfortNoiseFrames,
                             framesSilent: s.framesSilent, framesStretched: s.jitterBuffer.stretched,
                             framesShrunk: s.jitterBuffer.discardedForDelay, packetsLate: s.jitterBuffer.late,
                             targetDelayMilliseconds: Double(s.jitterBuffer.targetDelayNanoseconds) / 1e6,
                             currentDelayMilliseconds: Double(s.jitterBuffer.currentDelayNanoseconds) / 1e6)
    }
}
