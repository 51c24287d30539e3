import Foundation
import ParleyCallModel
import ParleyStore

/// A fresh directory under the system temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "parley-store-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    var storePath: String { path + "/" + SQLiteStore.defaultFileName }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Times used by the tests: a fixed base so expected values are exact.
enum T {
    static let base: Int64 = 1_764_421_200_000
    static func at(_ offsetMilliseconds: Int64) -> Int64 { base + offsetMilliseconds }
}

/// A call id in the protocol's format, distinct per number.
func callID(_ number: Int) -> String {
    let hex = String(number, radix: 16)
    return "00000000-0000-4000-8000-" + String(repeating: "0", count: max(0, 12 - hex.count)) + hex
}

extension SQLiteStore {
    /// A store with application `app` (secret `c2VjcmV0`) and users alice, bob and carol.
    static func withApplication(path: String? = nil) throws -> SQLiteStore {
        let store = try path.map { try SQLiteStore(path: $0) } ?? SQLiteStore.inMemory()
        try store.createApplication(key: "app", name: "test", secret: "c2VjcmV0", at: T.base)
        for user in ["alice", "bob", "carol"] { try store.recordUserSeen(applicationKey: "app", userId: user, at: T.base) }
        return store
    }

    /// A call from `caller` to `callee` that went all the way and was hung up after
    /// `talkMilliseconds`, with both legs' statistics.
    @discardableResult
    func completedCall(
        _ id: String, caller: String = "alice", callee: String = "bob", start: Int64, talkMilliseconds: Int64 = 60_000
    ) throws(StoreError) -> StoredCall {
        try createCall(id: id, applicationKey: "app", caller: caller, callee: callee, startedTime: start)
        try updateCallState(id: id, to: .progressing, at: start + 40)
        try updateCallState(id: id, to: .ringing, at: start + 220)
        try updateCallState(id: id, to: .answered, at: start + 4780)
        try updateCallState(id: id, to: .established, at: start + 4910)
        let end = start + 4780 + talkMilliseconds
        return try finishCall(
            id: id, cause: .hungUp, at: end,
            legs: [
                CallLeg(role: .caller, userId: caller, deviceId: "dev-\(caller)", updatedTime: end, statistics: .sample),
                CallLeg(role: .callee, userId: callee, updatedTime: end, statistics: CallLegStatistics(packetsSent: 10)),
            ])
    }
}

extension CallLegStatistics {
    static let sample = CallLegStatistics(
        packetsSent: 3000, octetsSent: 240_000, packetsReceived: 2970, octetsReceived: 237_600, inboundFractionLost: 0.0078125,
        inboundCumulativeLost: 30, inboundJitterMilliseconds: 2.5, outboundFractionLost: 0, outboundCumulativeLost: 1,
        outboundJitterMilliseconds: 1.25, roundTripTimeMilliseconds: 12.5)
}
