import Foundation
import ParleyCallModel
import ParleyStore
import Testing

/// A call's SIP Call-ID and final SIP status (migration 6), on every store.
@Suite struct CallSIPFieldsStoreTests {
    @Test(arguments: StoreFactory.all) func theCallIDThenTheStatusAreKeptThroughTheEnd(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        let id = callID(1)
        try store.createCall(id: id, applicationKey: "app", caller: .user("alice"), callee: .phone("+4615550101"),
                             direction: .appToPhone, startedTime: T.base)
        #expect(try store.call(id: id)?.sipCallId == nil)
        try store.recordSIP(callId: id, sipCallId: "a84b4c76e66710@gw", sipStatus: nil)
        try store.recordSIP(callId: id, sipCallId: nil, sipStatus: 486)
        try store.finishCall(id: id, cause: .denied, error: nil, at: T.at(3000), legs: [])
        let call = try #require(try store.call(id: id))
        #expect(call.sipCallId == "a84b4c76e66710@gw" && call.sipStatus == 486)
        let json = String(decoding: try JSONEncoder().encode(call), as: UTF8.self)
        #expect(json.contains(#""sipCallId":"a84b4c76e66710@gw""#) && json.contains(#""sipStatus":486"#))
        #expect(try JSONDecoder().decode(StoredCall.self, from: Data(json.utf8)) == call)
    }

    @Test(arguments: StoreFactory.all) func anAppToAppCallHasNoneAndBadInputIsRefused(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        let id = callID(2)
        try store.createCall(id: id, applicationKey: "app", caller: "alice", callee: "bob", startedTime: T.base)
        let json = String(decoding: try JSONEncoder().encode(try #require(try store.call(id: id))), as: UTF8.self)
        #expect(!json.contains("sip"))
        #expect(throws: StoreError.self) { try store.recordSIP(callId: id, sipCallId: nil, sipStatus: 99) }
        #expect(throws: StoreError.self) { try store.recordSIP(callId: callID(3), sipCallId: "x", sipStatus: nil) }
    }
}
