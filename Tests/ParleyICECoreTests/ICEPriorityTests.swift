import Foundation
import ParleyICECore
import Testing

@Suite("Priorities (RFC 8445 §5.1.2, §6.1.2.3)")
struct ICEPriorityTests {
    @Test("§5.1.2.1: 2^24 type preference + 2^8 local preference + (256 - component)")
    func candidatePriority() {
        #expect(ICEPriority.candidate(type: .host, localPreference: 65535) == 126 << 24 | 65535 << 8 | 255)
        #expect(ICEPriority.candidate(type: .host, localPreference: 65535) == 2_130_706_431)
        #expect(ICEPriority.candidate(type: .peerReflexive, localPreference: 65535, componentID: 2) == 1_862_270_974)
        #expect(ICEPriority.candidate(type: .serverReflexive, localPreference: 0) == 100 << 24 | 255)
        #expect(ICEPriority.candidate(type: .relay, localPreference: 1) == 511)
    }

    @Test("§5.1.2.2 type preferences: host 126, prflx 110, srflx 100, relay 0")
    func typePreferences() {
        #expect([ICECandidateType.host, .peerReflexive, .serverReflexive, .relay].map(\.typePreference) == [126, 110, 100, 0])
    }

    @Test("local preference: IPv6 above IPv4, earlier above later")
    func localPreference() {
        let v6 = ICEPriority.localPreference(for: address("2001:db8::1", 1), index: 0)
        let v4 = ICEPriority.localPreference(for: address("192.0.2.1", 1), index: 0)
        let v4b = ICEPriority.localPreference(for: address("192.0.2.2", 1), index: 1)
        #expect(v6 > v4 && v4 > v4b)
    }

    @Test("§6.1.2.3: 2^32 MIN(G,D) + 2 MAX(G,D) + (G>D ? 1 : 0)")
    func pairPriority() {
        #expect(ICEPriority.pair(controlling: 10, controlled: 20) == 10 << 32 | 40)
        #expect(ICEPriority.pair(controlling: 20, controlled: 10) == 10 << 32 | 41)
        #expect(ICEPriority.pair(controlling: .max, controlled: .max) == UInt64(UInt32.max) << 32 | 2 * UInt64(UInt32.max))
    }
}

@Suite("JSON of candidates and pairs")
struct ICEJSONTests {
    @Test("a remote candidate and a pair encode with camelCase keys and STUN address objects")
    func json() throws {
        let candidate = ICERemoteCandidate(address: address("192.0.2.1", 3478), priority: 2_130_706_431, type: .peerReflexive, foundation: "1")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let text = String(decoding: try encoder.encode(candidate), as: UTF8.self)
        #expect(text == #"{"address":{"address":"192.0.2.1","family":"ipv4","port":3478},"foundation":"1","priority":2130706431,"type":"prflx"}"#)
        let pair = ICECandidatePair(local: address("2001:db8::1", 1), remote: address("192.0.2.1", 2))
        let pairText = String(decoding: try encoder.encode(pair), as: UTF8.self)
        #expect(pairText == #"{"local":{"address":"2001:db8::1","family":"ipv6","port":1},"remote":{"address":"192.0.2.1","family":"ipv4","port":2}}"#)
    }
}
