import ParleyCallModel
import Foundation
import ParleyCalling
import ParleySignaling
import Testing

@Suite("Call records")
struct CallRecordTests {
    @Test("JSON form: protocol spellings, absent values omitted, round trip")
    func json() throws {
        var world = CallWorld()
        let alice = CallWorld.device("alice", "a1")
        world.connect(alice)
        world.call(from: alice, to: "nobody", callID: "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13", headers: ["X-Order": "1187"])
        let record = try #require(world.records.last)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(record), as: UTF8.self)
        #expect(json == #"{"callId":"6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13","callee":{"applicationKey":"3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41","userId":"nobody"},"caller":{"applicationKey":"3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41","userId":"alice"},"callerDeviceId":"a1","endCause":"error","endedTime":1764421200000,"errorCode":"destination_not_found","errorMessage":"destination user not found","headers":{"X-Order":"1187"},"startedTime":1764421200000,"state":"ended","video":false}"#)
        #expect(try JSONDecoder().decode(CallRecord.self, from: Data(json.utf8)) == record)
        #expect(record.durationMillis == 0)
    }
}
