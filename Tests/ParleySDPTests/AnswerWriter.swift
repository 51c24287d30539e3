import Foundation
import ParleySDP
import Testing

/// Used by scripts/capture-offers/check_answers.sh, not by `make test`: answers every
/// `<peer>-offer.sdp` in $PARLEY_SDP_ANSWER_DIR into `<peer>-answer.sdp`, so a real
/// peer can be asked whether it accepts our answer. The default candidate is loopback
/// for aiortc (which starts connectivity checks at once) and the capture namespace's
/// host-side veth address for browsers.
@Suite("Answer writer for real-peer checks")
struct AnswerWriter {
    static let directory = ProcessInfo.processInfo.environment["PARLEY_SDP_ANSWER_DIR"]

    @Test("write answers for real peers", .enabled(if: directory != nil))
    func writeAnswers() throws {
        let directory = try #require(Self.directory)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix("-offer.sdp") }
        for name in names {
            let peer = String(name.dropLast("-offer.sdp".count))
            let offer = try SessionDescription(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: "\(directory)/\(name)"))))
            var local = serverCapabilities()
            let address = peer == "aiortc" ? "127.0.0.1" : "10.203.0.1"
            local.candidates = [ICECandidate(foundation: "1", component: 1, transport: "udp", priority: 2_130_706_431, address: address, port: 40000)]
            let answer = try AudioOfferAnswer(local: local).answer(to: offer)
            try Data(answer.description.serializedBytes()).write(to: URL(fileURLWithPath: "\(directory)/\(peer)-answer.sdp"))
        }
    }
}
