import Foundation
import ParleyAuth
import ParleyCallModel
import ParleyStore
import Synchronization
import Testing

@testable import ParleyServer

/// The Sinch-shaped conference endpoints over a scripted `CallControl`: routing, the
/// answers, and every refusal in the Sinch error shape.
@Suite struct RESTConferenceAPITests {
    /// Knows one room, `standup` of application A, with one participant, and records what
    /// it is asked.
    final class ScriptedRooms: CallControl, Sendable {
        /// Application A's key, set once the fixture made the applications.
        let owner = Mutex<String>("")
        let asked = Mutex<[String]>([])
        var applicationKey: String { owner.withLock { $0 } }

        func hangUp(callID: String, applicationKey: String) async -> HangUpOutcome { .notFound }
        func liveCallCounts() async -> [CallState: Int] { [:] }
        func conferenceParticipants(_ conferenceID: String, applicationKey: String) async -> [ConferenceParticipant] {
            guard applicationKey == self.applicationKey, conferenceID == "standup" else { return [] }
            return [ConferenceParticipant(id: "c1", cli: "alice", duration: 12, muted: true, onhold: false, talking: false)]
        }
        func manageParticipant(_ command: ConferenceCommand, callID: String, conferenceID: String, applicationKey: String) async -> ConferenceOutcome {
            asked.withLock { $0.append("\(command.rawValue) \(conferenceID) \(callID)") }
            guard applicationKey == self.applicationKey, conferenceID == "standup" else { return .roomNotFound }
            return callID == "c1" ? .done : .participantNotFound
        }
        func kick(callID: String?, conferenceID: String, applicationKey: String) async -> ConferenceOutcome {
            asked.withLock { $0.append("kick \(conferenceID) \(callID ?? "all")") }
            guard applicationKey == self.applicationKey, conferenceID == "standup" else { return .roomNotFound }
            return callID == nil || callID == "c1" ? .done : .participantNotFound
        }
    }

    @Test func listsManagesAndKicks() async throws {
        let rooms = ScriptedRooms()
        let fixture = try RESTFixture(callControl: { _ in rooms })
        defer { fixture.close() }
        rooms.owner.withLock { $0 = fixture.appA.key }
        let room = "/calling/v1/conferences/id/standup"

        let listed = try await fixture.request("GET \(room)", as: fixture.appA)
        #expect(listed.status == 200)
        #expect(listed.body == #"{"participants":[{"cli":"alice","duration":12,"id":"c1","muted":true,"onhold":false,"talking":false}]}"#)
        // Application B has no such room.
        let other = try await fixture.request("GET \(room)", as: fixture.appB)
        #expect(other.status == 404)
        #expect(try other.json()["errorCode"] as? Int == 40400)

        for command in ["mute", "unmute", "onhold", "resume"] {
            let response = try await fixture.request("PATCH \(room)/c1", as: fixture.appA, body: #"{"command":"\#(command)"}"#)
            #expect(response.status == 204, "\(command)")
        }
        #expect(try await fixture.request("PATCH \(room)/c9", as: fixture.appA, body: #"{"command":"mute"}"#).status == 404)
        #expect(try await fixture.request("DELETE \(room)/c1", as: fixture.appA).status == 204)
        #expect(try await fixture.request("DELETE \(room)", as: fixture.appA).status == 204)
        #expect(try await fixture.request("DELETE \(room)", as: fixture.appB).status == 404)
        #expect(rooms.asked.withLock { $0 } == [
            "mute standup c1", "unmute standup c1", "onhold standup c1", "resume standup c1", "mute standup c9",
            "kick standup c1", "kick standup all", "kick standup all",
        ])
    }

    @Test func refusalsAreInTheSinchShape() async throws {
        let fixture = try RESTFixture()
        defer { fixture.close() }
        let room = "/calling/v1/conferences/id/standup"

        let missing = try await fixture.request("GET \(room)")
        #expect(missing.status == 401)
        #expect(missing.header("WWW-Authenticate") == #"Basic realm="parley""#)
        #expect(try missing.json()["errorCode"] as? Int == 40100)

        let cases: [(String, String, Int, Int)] = [
            ("GET /calling/v1/conferences/id/" + String(repeating: "r", count: 65), "", 400, 40000),
            ("GET /calling/v1/conferences/id/stand%20up", "", 400, 40000),
            ("GET \(room)", "", 404, 40400),
            ("GET /calling/v1/conferences/standup", "", 404, 40400),
            ("GET \(room)/c1/extra", "", 404, 40400),
            ("PATCH \(room)/c1", "not json", 400, 40000),
            ("PATCH \(room)/c1", #"{"cmd":"mute"}"#, 400, 40000),
            ("PATCH \(room)/c1", #"{"command":"deafen"}"#, 400, 40000),
            ("PATCH \(room)/c1", #"{"command":"mute","pad":""# + String(repeating: "x", count: 5000) + #""}"#, 413, 41300),
            ("PATCH \(room)/c1", #"{"command":"mute"}"#, 404, 40400),
            ("PUT \(room)", "", 405, 40500),
            ("POST \(room)/c1", "", 405, 40500),
        ]
        for (line, body, status, code) in cases {
            let response = try await fixture.request(line, as: fixture.appA, body: body)
            #expect(response.status == status, "\(line.prefix(80)): \(response.body)")
            #expect(try response.json()["errorCode"] as? Int == code, "\(line.prefix(80))")
            #expect((try response.json()["message"] as? String)?.isEmpty == false)
        }
        #expect(try await fixture.request("PUT \(room)", as: fixture.appA).header("Allow") == "GET, HEAD, DELETE")
    }
}
