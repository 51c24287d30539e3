import ParleyMediaLegCore
import Testing

extension RealTimeMediaTests {
    /// Our leg against headless Chromium in a network namespace the peer script makes
    /// (scripts/interop/chromium_peer.py): Chromium ignores loopback, so it reaches our leg
    /// over a veth pair.
    @Suite struct ChromiumInteropTests {
        static let scenarios: [InteropScenario] = [
            InteropScenario(script: "chromium_peer.py", peerOffers: true, iceMode: .lite, answerSetup: .passive),
            InteropScenario(script: "chromium_peer.py", peerOffers: false, iceMode: .full, profiles: [.aes128CMHMACSHA1_80]),
            InteropScenario(script: "chromium_peer.py", peerOffers: true, iceMode: .lite, codec: "pcmu"),
        ]

        @Test(arguments: scenarios)
        func chromium(_ scenario: InteropScenario) async throws {
            try await scenario.run()
        }
    }
}
