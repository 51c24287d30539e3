import Foundation
import ParleyCallModel
import ParleyStore
import ParleyVoiceAPI
import Testing

@testable import ParleyServer

/// The Sinch-shaped call endpoints (`/calling/v1/calls/id/...`) over the store: the call
/// information, SVAML updates, signed requests, and every refusal in the Sinch error shape.
@Suite struct RESTVoiceCallsAPITests {
    static let live = "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13"
    static let ended = "0b5d7a31-2c4e-4f6a-8b9c-1d2e3f4a5b6c"

    /// A phone call in to alice, answered and still going on (`live`), and an app-to-app
    /// call answered at 2 s and hung up by the REST API at 12 s (`ended`).
    private static func fixtureWithCalls(clock: @escaping @Sendable () -> Int64 = RESTAPI.wallClockMilliseconds) throws -> RESTFixture {
        let fixture = try RESTFixture(clock: clock)
        try fixture.store.performAndWait { store throws(StoreError) in
            try store.createCall(id: live, applicationKey: fixture.appA.key, caller: .phone("+46701234567"), callee: .user("alice"),
                                 direction: .phoneToApp, startedTime: 1_764_421_200_000)
            try store.updateCallState(id: live, to: .answered, at: 1_764_421_201_000)
            try store.createCall(id: ended, applicationKey: fixture.appA.key, caller: "alice", callee: "bob", startedTime: 1_000)
            try store.updateCallState(id: ended, to: .answered, at: 2_000)
            _ = try store.finishCall(id: ended, cause: .hungUp, at: 12_900)
            try store.recordCallEvent(callId: ended, applicationKey: fixture.appA.key,
                                      CallEvent(time: 12_800, kind: CallEngine.hangUpEventKind, detail: ["by": "api"]))
        }
        return fixture
    }

    @Test func getGivesTheCallInTheSinchShape() async throws {
        let fixture = try Self.fixtureWithCalls(clock: { 1_764_421_231_500 })
        defer { fixture.close() }

        let live = try await fixture.request("GET /calling/v1/calls/id/\(Self.live)", as: fixture.appA)
        #expect(live.status == 200, "\(live.body)")
        let information = try live.json()
        #expect(information["callId"] as? String == Self.live)
        #expect(information["from"] as? [String: String] == ["type": "number", "endpoint": "+46701234567"])
        #expect(information["to"] as? [String: String] == ["type": "username", "endpoint": "alice"])
        #expect(information["domain"] as? String == "pstn")
        #expect(information["status"] as? String == "ONGOING")
        #expect(information["result"] as? String == "N/A")
        #expect(information["reason"] as? String == "N/A")
        #expect(information["duration"] as? Int == 30)
        #expect(information["timestamp"] as? String == "2025-11-29T13:00:00Z")

        let ended = try await fixture.request("GET /calling/v1/calls/id/\(Self.ended)", as: fixture.appA)
        let final = try ended.json()
        #expect(final["status"] as? String == "FINAL")
        #expect(final["result"] as? String == "ANSWERED")
        #expect(final["reason"] as? String == "MANAGERHANGUP")
        #expect(final["duration"] as? Int == 10)
        #expect(final["domain"] as? String == "mxp")

        // Another application's call is not found, exactly like one that does not exist.
        let foreign = try await fixture.request("GET /calling/v1/calls/id/\(Self.live)", as: fixture.appB)
        #expect(foreign.status == 404)
        let error = try foreign.json()
        #expect(error["status"] as? Int == 404)
        #expect(error["errorCode"] as? Int == 40400)
        #expect((error["message"] as? String)?.contains(Self.live) == true)
        #expect((error["reference"] as? String)?.count == 36)
    }

    @Test func patchHangsUpOrContinuesALiveCall() async throws {
        let fixture = try Self.fixtureWithCalls()
        defer { fixture.close() }
        let path = "/calling/v1/calls/id/\(Self.live)"

        #expect(try await fixture.request("PATCH \(path)", as: fixture.appA, body: #"{"action":{"name":"continue"}}"#).status == 204)
        // Another application cannot end it.
        #expect(try await fixture.request("PATCH \(path)", as: fixture.appB, body: #"{"action":{"name":"hangup"}}"#).status == 404)
        let hungUp = try await fixture.request("PATCH \(path)", as: fixture.appA, body: #"{"instructions":[],"action":{"name":"Hangup"}}"#)
        #expect(hungUp.status == 204, "\(hungUp.body)")
        #expect(try await fixture.request("GET \(path)", as: fixture.appA).json()["status"] as? String == "FINAL")

        let again = try await fixture.request("PATCH \(path)", as: fixture.appA, body: #"{"action":{"name":"hangup"}}"#)
        #expect(again.status == 409)
        #expect(try again.json()["errorCode"] as? Int == 40900)
        #expect(try await fixture.request("PATCH \(path)", as: fixture.appA, body: #"{"action":{"name":"continue"}}"#).status == 409)
    }

    @Test func badUpdatesAreRefusedInTheSinchShape() async throws {
        let fixture = try Self.fixtureWithCalls()
        defer { fixture.close() }
        let path = "/calling/v1/calls/id/\(Self.live)"
        let cases: [(String, String, Int, Int)] = [
            ("PATCH \(path)", "not json", 400, 40000),
            ("PATCH \(path)", #"{"instructions":[]}"#, 400, 40000),
            ("PATCH \(path)", #"{"action":{"name":"connectMxp","destination":{"type":"username","endpoint":"bob"}}}"#, 400, 40000),
            ("PATCH \(path)", #"{"action":{"name":"hangup"},"pad":""# + String(repeating: "x", count: 17_000) + #""}"#, 413, 41300),
            ("PATCH \(path)", ##"{"action":{"name":"park","holdPrompt":"#tts[wait]"}}"##, 501, 50100),
            ("PATCH \(path)", #"{"instructions":[{"name":"say","text":"hello","locale":"en-US"}],"action":{"name":"continue"}}"#, 501, 50100),
            ("PATCH \(path)/leg/both", #"{"instructions":[{"name":"say","text":"hello","locale":"en-US"}]}"#, 501, 50100),
            ("PATCH \(path)/leg/other", #"{"instructions":[]}"#, 400, 40000),
            ("GET \(path)/leg/caller", "", 405, 40500),
            ("DELETE \(path)", "", 405, 40500),
            ("GET /calling/v1/calls/id/", "", 404, 40400),
            ("GET /calling/v1/calls/\(Self.live)", "", 404, 40400),
            ("PATCH /calling/v1/calls/id/nothing", #"{"action":{"name":"hangup"}}"#, 404, 40400),
        ]
        for (line, body, status, code) in cases {
            let response = try await fixture.request(line, as: fixture.appA, body: body)
            #expect(response.status == status, "\(line.prefix(80)): \(response.body)")
            let error = try response.json()
            #expect(error["errorCode"] as? Int == code, "\(line.prefix(80))")
            #expect(error["status"] as? Int == status, "\(line.prefix(80))")
            #expect((error["message"] as? String)?.isEmpty == false)
        }
        // Nothing above ended the call.
        #expect(try await fixture.request("GET \(path)", as: fixture.appA).json()["status"] as? String == "ONGOING")
    }

    @Test func signedRequestsAreVerified() async throws {
        let now: Int64 = 1_764_421_231_500
        let fixture = try Self.fixtureWithCalls(clock: { now })
        defer { fixture.close() }
        let signer = SinchRequestSigner(credentials: try SinchApplicationCredentials(
            applicationKey: fixture.appA.key, applicationSecret: fixture.appA.secret))
        func signed(_ method: String, _ path: String, body: String = "", at time: Int64 = now,
                    with other: SinchRequestSigner? = nil) throws -> (authorization: String, headers: [(String, String)]) {
            let request = try (other ?? signer).sign(method: method, path: path, contentType: "application/json",
                                                     body: Array(body.utf8), timestamp: SinchTimestamp(unixMilliseconds: time))
            var headers = request.headerFields.filter { $0.name.lowercased() != "authorization" }.map { ($0.name, $0.value) }
            if body.isEmpty { headers.removeAll { $0.0.lowercased() == "content-type" } }
            return (request.authorization, headers)
        }
        let path = "/calling/v1/calls/id/\(Self.live)"

        let get = try signed("GET", path)
        let read = try await fixture.request("GET \(path)", authorization: get.authorization, headers: get.headers)
        #expect(read.status == 200, "\(read.body)")

        // The same signature for another path, a changed body, a stale time, another
        // application's secret, or a bad header form: 401 40100, nothing done.
        let forged = try await fixture.request("GET /calling/v1/calls/id/\(Self.ended)", authorization: get.authorization, headers: get.headers)
        #expect(forged.status == 401)
        #expect(try forged.json()["errorCode"] as? Int == 40100)

        let body = #"{"action":{"name":"hangup"}}"#
        let patch = try signed("PATCH", path, body: body)
        let tampered = try await fixture.request("PATCH \(path)", authorization: patch.authorization, headers: patch.headers,
                                                 body: #"{"action":{"name":"hangup"} }"#)
        #expect(tampered.status == 401, "\(tampered.body)")

        let stale = try signed("GET", path, at: now - 16 * 60 * 1000)
        let staleResponse = try await fixture.request("GET \(path)", authorization: stale.authorization, headers: stale.headers)
        #expect(staleResponse.status == 401)
        #expect((try staleResponse.json()["message"] as? String)?.contains("x-timestamp") == true)

        let otherSigner = SinchRequestSigner(credentials: try SinchApplicationCredentials(
            applicationKey: fixture.appA.key, applicationSecret: fixture.appB.secret))
        let wrongSecret = try signed("GET", path, with: otherSigner)
        #expect(try await fixture.request("GET \(path)", authorization: wrongSecret.authorization, headers: wrongSecret.headers).status == 401)
        #expect(try await fixture.request("GET \(path)", authorization: "Application \(fixture.appA.key)", headers: get.headers).status == 401)
        #expect(try await fixture.request("GET \(path)", authorization: "Application nobody:AAAA", headers: get.headers).status == 401)
        #expect(try await fixture.request("GET \(path)", as: fixture.appA).json()["status"] as? String == "ONGOING")

        // A signed update is carried out.
        let hangUp = try await fixture.request("PATCH \(path)", authorization: patch.authorization, headers: patch.headers, body: body)
        #expect(hangUp.status == 204, "\(hangUp.body)")
    }
}
