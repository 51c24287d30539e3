import ParleyCallModel
import Foundation
import ParleyCallCore
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
        #expect(json == #"{"applicationKey":"3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41","callId":"6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13","callee":{"address":"nobody","kind":"user"},"caller":{"address":"alice","kind":"user"},"callerDeviceId":"a1","direction":"appToApp","endCause":"error","error":{"code":"destination_not_found","message":"destination user not found"},"headers":{"X-Order":"1187"},"state":"ended","times":{"endedTime":1764421200000,"startedTime":1764421200000},"video":false}"#)
        #expect(try JSONDecoder().decode(CallRecord.self, from: Data(json.utf8)) == record)
        #expect(record.durationMillis == 0)
        #expect(record.direction.fits(caller: record.caller, callee: record.callee))
    }

    @Test("The callee is an address: only the user it names, in the caller's application, is it")
    func calleeIsAnAddress() throws {
        var world = CallWorld()
        let alice = CallWorld.device("alice", "a1")
        world.connect(alice)
        world.call(from: alice, to: "nobody", callID: "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13")
        let record = try #require(world.records.last)
        #expect(record.callee == .user("nobody"))
        #expect(record.isCallee(AppUser(applicationKey: record.applicationKey, userID: "nobody")))
        #expect(!record.isCallee(AppUser(applicationKey: "another-application", userID: "nobody")))
        #expect(!record.isCallee(AppUser(applicationKey: record.applicationKey, userID: "alice")))
        #expect(record.answeringParty == nil)
    }

    @Test("A stored leg row's role comes from the live leg's id")
    func legRoleFromLegID() {
        let bob = Device(user: AppUser(applicationKey: "k", userID: "bob"), deviceID: "b1")
        #expect(CallLegRole(CallLegID.caller) == .caller)
        #expect(CallLegRole(CallLegID.callee(.device(bob))) == .callee)
    }
}
