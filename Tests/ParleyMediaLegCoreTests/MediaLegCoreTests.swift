import ParleyCrypto
import ParleyMediaCore
@testable import ParleyMediaLegCore
import ParleySDP
import Testing

@Suite struct MediaLegCoreTests {
    static let certificates = (try? DTLSCertificate.generate(), try? DTLSCertificate.generate())

    static func pair(offerer: MediaLegConfiguration.ICEMode, answerer: MediaLegConfiguration.ICEMode,
                     codecs: [AudioCodec] = [.opus, .pcmu], answerSetup: DTLSSetup = .active,
                     profiles: [SRTPProtectionProfile] = [.aeadAES128GCM, .aes128CMHMACSHA1_80]) throws -> LegPairHarness {
        var a = MediaLegConfiguration(iceMode: offerer, certificate: try #require(certificates.0))
        var b = MediaLegConfiguration(iceMode: answerer, certificate: try #require(certificates.1))
        a.codecs = codecs
        b.codecs = codecs
        b.answerSetup = answerSetup
        a.srtpProfiles = profiles
        b.srtpProfiles = profiles
        return try LegPairHarness(offererConfiguration: a, answererConfiguration: b)
    }

    @Test(arguments: [
        (MediaLegConfiguration.ICEMode.full, MediaLegConfiguration.ICEMode.lite, DTLSSetup.active),
        (.full, .lite, .passive),
        (.lite, .full, .active),
        (.full, .full, .passive),
    ])
    func connectsAndCarriesToneBothWays(offererMode: MediaLegConfiguration.ICEMode, answererMode: MediaLegConfiguration.ICEMode, setup: DTLSSetup) throws {
        var harness = try Self.pair(offerer: offererMode, answerer: answererMode, answerSetup: setup)
        try harness.negotiate()
        try harness.startBoth()
        harness.run(for: .seconds(1))
        #expect(harness.offerer.state == .connected)
        #expect(harness.answerer.state == .connected)
        harness.run(for: .seconds(3), audio: true)
        let a = harness.offerer.statistics
        let b = harness.answerer.statistics
        #expect(a.codec == "opus/48000/2")
        #expect(a.srtpProfile == "SRTP_AEAD_AES_128_GCM")
        #expect(a.dtlsRole != b.dtlsRole)
        #expect(b.framesSent >= 149 && a.framesSent >= 149)
        #expect(a.framesPlayedFromPackets >= 140, "\(a)")
        #expect(b.framesPlayedFromPackets >= 140, "\(b)")
        let heardByOfferer = FrequencyAnalysis.dominantFrequency(samples: Array(harness.offererReceived.suffix(48_000)), sampleRate: 48_000)
        let heardByAnswerer = FrequencyAnalysis.dominantFrequency(samples: Array(harness.answererReceived.suffix(48_000)), sampleRate: 48_000)
        #expect(abs((heardByOfferer ?? 0) - 1000) < 10)
        #expect(abs((heardByAnswerer ?? 0) - 440) < 10)
        #expect(harness.drops("offerer").isEmpty, "\(harness.drops("offerer"))")
        #expect(harness.drops("answerer").isEmpty, "\(harness.drops("answerer"))")
    }

    /// The STUN datagrams (RFC 7983: first byte 0-3) each side sent while two full ICE
    /// agents connect, from legs seeded with `seed` and `seed + 1`.
    static func iceChecks(seed: UInt64) throws -> [(side: String, bytes: [UInt8])] {
        let a = MediaLegConfiguration(iceMode: .full, certificate: try #require(certificates.0))
        let b = MediaLegConfiguration(iceMode: .full, certificate: try #require(certificates.1))
        var harness = try LegPairHarness(offererConfiguration: a, answererConfiguration: b, seed: seed)
        harness.recordSends = true
        try harness.negotiate()
        try harness.startBoth()
        harness.run(for: .milliseconds(300))
        #expect(harness.offerer.state == .connected && harness.answerer.state == .connected)
        return harness.sent.filter { $0.bytes.first.map { $0 < 4 } ?? false }
    }

    @Test func aSeededLegRepeatsItsICEChecks() throws {
        // Credentials, tie-breakers, transaction IDs and consent jitter all come from the
        // generator the leg was given, so the same seed sends the same checks byte for byte.
        let first = try Self.iceChecks(seed: 42)
        let again = try Self.iceChecks(seed: 42)
        #expect(first.contains { $0.side == "offerer" } && first.contains { $0.side == "answerer" })
        #expect(first.map(\.side) == again.map(\.side))
        #expect(first.map(\.bytes) == again.map(\.bytes))
        let other = try Self.iceChecks(seed: 43)
        #expect(first.map(\.bytes) != other.map(\.bytes))
    }

    @Test func pcmuAndAESCMProfile() throws {
        var harness = try Self.pair(offerer: .full, answerer: .lite, codecs: [.pcmu], profiles: [.aes128CMHMACSHA1_80])
        try harness.negotiate()
        try harness.startBoth()
        harness.run(for: .seconds(1))
        harness.run(for: .seconds(2), audio: true)
        let a = harness.offerer.statistics
        #expect(a.codec == "PCMU/8000")
        #expect(a.srtpProfile == "SRTP_AES128_CM_SHA1_80")
        let heard = FrequencyAnalysis.dominantFrequency(samples: Array(harness.answererReceived.suffix(48_000)), sampleRate: 48_000)
        #expect(abs((heard ?? 0) - 440) < 10)
    }
}
