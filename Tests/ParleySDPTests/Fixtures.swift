import Foundation
import ParleySDP
import Testing
import ParleyTestSupport

/// Real descriptions captured from browsers and aiortc (scripts/capture-offers/).
enum Fixture: String, CaseIterable, CustomTestStringConvertible {
    case chromiumOffer = "chromium-offer"
    case firefoxOffer = "firefox-offer"
    case aiortcOffer = "aiortc-offer"
    case chromiumAnswerToAiortc = "chromium-answer-to-aiortc"

    static let offers: [Fixture] = [.chromiumOffer, .firefoxOffer, .aiortcOffer]

    var testDescription: String { rawValue }

    var bytes: [UInt8] {
        get throws {
            let url = try #require(Bundle.module.url(forResource: rawValue, withExtension: "sdp", subdirectory: "Fixtures"))
            return Array(try Data(contentsOf: url))
        }
    }

    var text: String {
        get throws { String(decoding: try bytes, as: UTF8.self) }
    }

    var parsed: SessionDescription {
        get throws { try SessionDescription(parsing: try bytes) }
    }
}

/// Our side in the offer/answer tests: an ICE-lite server on the capture veth.
func serverCapabilities(
    codecs: [AudioCodec] = [.opus, .pcmu, .pcma],
    setupPreference: DTLSSetup = .active,
    direction: MediaDirection = .sendrecv,
    opusDTX: Bool = false
) -> LocalAudioCapabilities {
    LocalAudioCapabilities(
        iceUsernameFragment: "prly",
        icePassword: "parleyIcePassword0123456",
        fingerprint: Fingerprint(algorithm: "sha-256", bytes: Array(0..<32)),
        sessionID: 4_242_424_242,
        codecs: codecs,
        opusDTX: opusDTX,
        iceLite: true,
        candidates: [ICECandidate(foundation: "1", component: 1, transport: "udp", priority: 2_130_706_431, address: "10.203.0.1", port: 40000)],
        setupPreference: setupPreference,
        direction: direction,
        sendStream: .init(ssrc: 0x1234_5678, cname: "parley", streamID: "parley-stream", trackID: "parley-audio")
    )
}

