import Foundation
import ParleyCallModel
import ParleyStore
import Testing

@Suite struct StoredCallJSONTests {
    private func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test(arguments: StoreFactory.all) func finishedCallEncodesWithProtocolNames(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        let record = try store.completedCall(callID(1), start: T.base, talkMilliseconds: 1000)
        let expected = """
            {"applicationKey":"app","callId":"00000000-0000-4000-8000-000000000001","callee":"bob","caller":"alice",\
            "details":{"answeredTime":1764421204780,"endedTime":1764421205780,"establishedTime":1764421204910,\
            "progressedTime":1764421200040,"rungTime":1764421200220,"startedTime":1764421200000},\
            "direction":"appToApp","durationMs":1000,"endCause":"hungUp",\
            "legs":[{"deviceId":"dev-alice","role":"caller","statistics":{"inboundCumulativeLost":30,\
            "inboundFractionLost":0.0078125,"inboundJitterMilliseconds":2.5,"octetsReceived":237600,"octetsSent":240000,\
            "outboundCumulativeLost":1,"outboundFractionLost":0,"outboundJitterMilliseconds":1.25,"packetsReceived":2970,\
            "packetsSent":3000,"roundTripTimeMilliseconds":12.5},"updatedTime":1764421205780,"userId":"alice"},\
            {"role":"callee","statistics":{"inboundCumulativeLost":0,"inboundFractionLost":0,"inboundJitterMilliseconds":0,\
            "octetsReceived":0,"octetsSent":0,"packetsReceived":0,"packetsSent":10},"updatedTime":1764421205780,"userId":"bob"}],\
            "state":"ended"}
            """
        #expect(try json(record) == expected)
        #expect(try JSONDecoder().decode(StoredCall.self, from: Data(expected.utf8)) == record)
    }

    @Test func failedCallCarriesItsErrorAndOmitsAbsentTimes() throws {
        let record = StoredCall(
            callId: callID(2), applicationKey: "app", caller: "alice", callee: "dave", direction: .appToApp, state: .ended,
            details: CallTimes(startedTime: 1_764_421_401_000, endedTime: 1_764_421_401_003), endCause: .error,
            error: CallError(code: "destination_not_found", message: "destination user not found"), durationMs: 0)
        #expect(try json(record) == """
            {"applicationKey":"app","callId":"00000000-0000-4000-8000-000000000002","callee":"dave","caller":"alice",\
            "details":{"endedTime":1764421401003,"startedTime":1764421401000},"direction":"appToApp","durationMs":0,\
            "endCause":"error","error":{"code":"destination_not_found","message":"destination user not found"},\
            "legs":[],"state":"ended"}
            """)
    }

    @Test func pageEncodesItsCursorOnlyWhenMoreFollow() throws {
        #expect(try json(CallPage(calls: [])) == #"{"calls":[]}"#)
        #expect(try json(CallPage(calls: [], nextCursor: "5.6")) == #"{"calls":[],"nextCursor":"5.6"}"#)
    }

    @Test func applicationEncodesForTheCLI() throws {
        let application = Application(key: "k", name: "dev", secret: "c2VjcmV0", createdTime: 1)
        #expect(try json(application) == #"""
            {"createdTime":1,"dialling":{"allowedNumberPrefixes":[],"allowsSIPAddresses":false,"maxCallDurationSeconds":7200,\#
            "maxConcurrentPhoneCalls":10,"maxPhoneCallsPerMinute":30},"key":"k","name":"dev","secret":"c2VjcmV0"}
            """#)
    }
}
