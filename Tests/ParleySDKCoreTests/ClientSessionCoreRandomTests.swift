import Foundation
@_spi(ParleyEngines) @testable import ParleySDKCore
import ParleySignaling
import ParleyTestSupport
import Testing

/// Random sequences of server frames (valid, duplicated, out of order, for unknown calls,
/// garbage), connection events and user actions, on a virtual clock. Whatever arrives, the
/// core must keep the SDK's promises: per call, `incoming` first if at all, progress events
/// at most once each and in order, `ended` exactly once at most and last, a media close
/// before every end; and it never traps.
@Suite struct ClientSessionCoreRandomTests {
    private static let callIDs = ["6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13", "0d6b9f64-1e2a-4f8c-8b37-6a5c2e1f9d08",
                                  "9a2e4c71-55d3-4b0e-a6f8-3c1d7e2b9f40"]

    private static func randomStep(_ random: inout SeededGenerator, helloCount: Int) -> CoreHarness.Step {
        let id = callIDs[random.below(callIDs.count)]
        switch random.below(24) {
        case 0: return .frame(CoreHarness.incoming(id))
        case 1: return .frame(CoreHarness.media(id))
        case 2: return .frame(CoreHarness.event("call.progress", id))
        case 3: return .frame(CoreHarness.event("call.ringing", id))
        case 4: return .frame(CoreHarness.event("call.answered", id))
        case 5: return .frame(CoreHarness.event("call.established", id))
        case 6: return .frame(CoreHarness.ended(id, ["hungUp", "canceled", "denied", "error", "inactive"][random.below(5)]))
        case 7: return .frame(CoreHarness.result(String(random.below(12))))
        case 8: return .frame(CoreHarness.error(String(random.below(12)), ["call_exists", "invalid_state", "internal_error"][random.below(3)]))
        case 9: return .frame(String(decoding: random.bytes(random.below(40)), as: UTF8.self))
        case 10: return .frame(CoreHarness.helloOK(re: String(helloCount), session: "s-1", resumed: random.below(2) == 0))
        case 11: return .callUser("bob", id: id)
        case 12: return .legOffered(id)
        case 13: return .legAnswered(id)
        case 14: return .legFailed(id)
        case 15: return .answer(id)
        case 16: return .hangup(id)
        case 17: return .closed([1006, 1011, 4004, 1001][random.below(4)])
        case 18: return .advance(.milliseconds(random.below(15_000)))
        case 19: return .opened
        case 20: return .token("jwt")
        case 21: return .legPrepared(id)
        case 22: return .legPreparationFailed(id)
        default: return random.below(10) == 0 ? .terminate : .start
        }
    }

    @Test func randomInputsKeepEveryCallsEventsInOrder() {
        var random = SeededGenerator(seed: 20261201)
        let rank = ["incoming": 0, "progressed": 1, "rang": 2, "answered": 3, "established": 4]
        var seen: [String: Int] = [:]
        for run in 0..<500 {
            var h = CoreHarness()
            _ = h.run(CoreHarness.opening)
            var lastRank: [String: Int] = [:]
            var ended: Set<String> = []
            var closedMedia: Set<String> = []
            var helloCount = 1
            for stepIndex in 0..<80 {
                let step = Self.randomStep(&random, helloCount: helloCount)
                let lines = h.step(step)
                for line in lines {
                    let parts = line.split(separator: " ").map(String.init)
                    if parts.first == "send", parts.count > 1, parts[1] == "hello", let id = parts.first(where: { $0.hasPrefix("id=") }) {
                        helloCount = Int(id.dropFirst(3)) ?? helloCount
                    }
                    if parts.first == "media", parts.count == 3, parts[1] == "close" { closedMedia.insert(parts[2]) }
                    seen[parts.first ?? "", default: 0] += 1
                    guard parts.count >= 2, let kind = parts.first else { continue }
                    let callID = parts[1]
                    if kind == "ended" {
                        #expect(!ended.contains(callID), "run \(run) step \(stepIndex): \(callID) ended twice")
                        #expect(closedMedia.contains(callID), "run \(run) step \(stepIndex): ended before its media close")
                        ended.insert(callID)
                        lastRank[callID] = nil
                    } else if let r = rank[kind] {
                        #expect(lastRank[callID].map { $0 < r } ?? true, "run \(run) step \(stepIndex): \(line) after rank \(lastRank[callID] ?? -1)")
                        lastRank[callID] = r
                    }
                    if kind == "incoming" { ended.remove(callID); closedMedia.remove(callID) }
                }
                if case .callUser(_, let id) = step, !lines.isEmpty { ended.remove(id); closedMedia.remove(id); lastRank[id] = nil }
            }
        }
        // The sequences reach every kind of event, not only the refusals.
        for kind in ["incoming", "progressed", "rang", "answered", "established", "ended", "send", "connect"] {
            #expect(seen[kind, default: 0] > 20, "\(kind): \(seen[kind, default: 0]) times")
        }
        #expect(seen["started", default: 0] > 0, "restarts after terminate reach hello.ok")
    }
}
