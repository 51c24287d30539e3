@_spi(ParleyEngines) public import ParleySDKCore
import ParleyMediaLegCore
import ParleyNetCore
import ParleyNetLinux

/// The media engine on Linux: each call's leg is our own `MediaLeg` on one epoll loop the
/// engine starts with its first call, with the audio the controller configures.
public final class LinuxMediaEngine: ParleyMediaEngine, @unchecked Sendable {
    // @unchecked: `loop` is behind its lock; the rest is immutable.
    private let loop = Locked<EventLoop?>(nil)
    private let mix = LinuxAudioEngine()
    /// The ALSA device of `.device` calls.
    private let device: LinuxAudioDevice

    /// An engine with no loop yet (made with its first call) whose `.device` calls use
    /// `device` for both capture and playback.
    public init(device: LinuxAudioDevice = .systemDefault) {
        self.device = device
    }

    deinit { loop.current?.shutdown() }

    public var audio: any ParleyAudioEngine { mix }

    public func prepare() { MediaLegCore.prepareProcess() }

    public func makeCallMedia(callID: String, localHost: String?, source: ParleyAudioSource,
                              sink: ParleyAudioSink) -> any ParleyCallMedia {
        let loop = loop.withLock { loop in
            if loop == nil { loop = try? EventLoop(name: "parley-sdk-media") }
            return loop
        }
        let bindHost = localHost.flatMap { SocketAddress(host: $0, port: 0) } ?? .ipv4Loopback(port: 0)
        return LinuxCallMedia(callID: callID, loop: loop, bindingTo: bindHost, source: source, sink: sink, mix: mix.state, device: device)
    }
}
