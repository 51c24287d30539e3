import ParleyMediaLegCore
import Testing

extension RealTimeMediaTests {
    /// Our leg against aiortc on loopback (scripts/interop/aiortc_peer.py): both offer
    /// directions, our ICE as lite and as full agent, both DTLS roles, both SRTP profiles,
    /// Opus and PCMU; 5 s of tones each way.
    @Suite struct AiortcInteropTests {
        static let scenarios: [InteropScenario] = [
            // aiortc offers (actpass): we answer active (DTLS client) or passive (server).
            InteropScenario(script: "aiortc_peer.py", peerOffers: true, iceMode: .lite, answerSetup: .active,
                            profiles: [.aeadAES128GCM], peerArguments: ["--srtp-profile", "gcm"]),
            InteropScenario(script: "aiortc_peer.py", peerOffers: true, iceMode: .full, answerSetup: .passive,
                            profiles: [.aes128CMHMACSHA1_80], peerArguments: ["--srtp-profile", "cm"]),
            // We offer (actpass): aiortc answers active, so we are the DTLS server.
            InteropScenario(script: "aiortc_peer.py", peerOffers: false, iceMode: .lite,
                            profiles: [.aes128CMHMACSHA1_80], peerArguments: ["--srtp-profile", "cm"]),
            InteropScenario(script: "aiortc_peer.py", peerOffers: false, iceMode: .full,
                            profiles: [.aeadAES128GCM], peerArguments: ["--srtp-profile", "gcm"]),
            // G.711 mu-law, both directions of offer.
            InteropScenario(script: "aiortc_peer.py", peerOffers: true, iceMode: .lite, answerSetup: .passive, codec: "pcmu"),
            InteropScenario(script: "aiortc_peer.py", peerOffers: false, iceMode: .full, codec: "pcmu"),
        ]

        @Test(arguments: scenarios)
        func aiortc(_ scenario: InteropScenario) async throws {
            try await scenario.run()
        }
    }
}
