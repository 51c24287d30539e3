import Foundation
import Testing
import ParleyRTP
import ParleyWireCore

/// Tests/Fixtures/rtp and rtcp hold the samples as hex for the CLI tests; they must
/// stay the same bytes as `Sample` and parse.
@Suite("Hex fixtures for the CLI")
struct FixtureTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    func load(_ directory: String, _ name: String) throws -> [UInt8] {
        let url = Self.fixtures.appendingPathComponent(directory).appendingPathComponent(name)
        return try Hex.decode(String(contentsOf: url, encoding: .utf8))
    }

    @Test("RTP fixtures match the samples and parse")
    func rtp() throws {
        let expected: [String: String] = [
            "minimal.hex": Sample.rtpMinimal,
            "csrc-padding.hex": Sample.rtpCSRCPadding,
            "opus-one-byte-extension.hex": Sample.rtpOpusOneByteExtension,
            "two-byte-extension.hex": Sample.rtpTwoByteExtension,
            "generic-extension.hex": Sample.rtpGenericExtension,
            "telephone-event.hex": Sample.rtpTelephoneEvent,
        ]
        for (name, hex) in expected {
            let bytes = try load("rtp", name)
            #expect(bytes == Sample.bytes(hex), "\(name)")
            #expect(try RTPPacket(parsing: bytes).serialized() == bytes)
        }
    }

    @Test("RTCP fixtures match the samples and parse")
    func rtcp() throws {
        let expected: [String: String] = [
            "chromium-sr-sdes.hex": Sample.rtcpChromiumSRSDES,
            "rr-bye-padded.hex": Sample.rtcpRRByePadded,
            "rr-nack-pli.hex": Sample.rtcpFeedback,
            "reduced-size-pli.hex": Sample.rtcpReducedSizePLI,
            "sdes-app-xr.hex": Sample.rtcpSDESAppXR,
            "sr-profile-extension.hex": Sample.rtcpSRProfileExtension,
        ]
        for (name, hex) in expected {
            let bytes = try load("rtcp", name)
            #expect(bytes == Sample.bytes(hex), "\(name)")
            #expect(try RTCPCompoundPacket(parsing: bytes).serialized() == bytes)
        }
    }
}
