import Foundation
import ParleyHTTP
import ParleySignaling

/// The conference endpoints of the Sinch Voice API's shape (docs/conference.md,
/// "Moderation over REST"), so a backend written for Sinch moderates Parley's rooms:
///
/// - `GET /calling/v1/conferences/id/{conferenceId}`: `{"participants": [{"id", "cli",
///   "duration", "muted", "onhold", "talking"}]}`;
/// - `PATCH /calling/v1/conferences/id/{conferenceId}/{callId}` with
///   `{"command": "mute" | "unmute" | "onhold" | "resume"}`: 204;
/// - `DELETE /calling/v1/conferences/id/{conferenceId}/{callId}`: that participant's call
///   ends `hungUp`; 204;
/// - `DELETE /calling/v1/conferences/id/{conferenceId}`: every participant's; 204.
///
/// Authenticated as `/v1` is (HTTP Basic, application key and secret); an application only
/// ever sees its own rooms. Errors are `{"status", "errorCode": N, "message", "reference"}`: 40000 bad
/// request, 40100 unauthorized, 40400 no such room or participant, 40500 method not
/// allowed, 41300 body too large, 50000 the server failed.
extension RESTAPI {
    static let callingPrefix = "/calling/v1/"
    /// The largest `PATCH` body read.
    static let maximumCommandBytes = 4096

    /// A request under `/calling/v1/`, once authenticated as `applicationKey`.
    func callingResponse(to request: HTTPRequest, applicationKey: String) async -> HTTPResponse {
        // "/calling/v1/conferences/id/{id}[/{callId}]" splits into "", "calling", "v1", ...
        let segments = Array(request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst(3))
        if segments == ["callouts"] { return await calloutResponse(to: request, applicationKey: applicationKey) }
        if segments.first == "calls" { return await voiceCallResponse(to: request, segments: segments, applicationKey: applicationKey) }
        guard segments.count == 3 || segments.count == 4, segments[0] == "conferences", segments[1] == "id" else {
            return Self.sinchError(404, 40400, "no resource at \(Self.printable(request.path))")
        }
        let room = String(segments[2])
        if let problem = SignalingMessage.Address.conference(room).formatProblem {
            return Self.sinchError(400, 40000, "conference id \(Self.printable(room)) is not valid: \(problem)")
        }
        if segments.count == 3 {
            switch request.method {
            case "GET", "HEAD":
                let participants = await callControl.conferenceParticipants(room, applicationKey: applicationKey)
                guard !participants.isEmpty else { return Self.roomNotFound(room) }
                return Self.json(200, ConferenceInfo(participants: participants))
            case "DELETE":
                return Self.outcome(await callControl.kick(callID: nil, conferenceID: room, applicationKey: applicationKey), room: room, callID: nil)
            default:
                return Self.sinchMethodNotAllowed(allow: "GET, HEAD, DELETE")
            }
        }
        let callID = String(segments[3])
        switch request.method {
        case "PATCH":
            guard request.body.count <= Self.maximumCommandBytes else {
                return Self.sinchError(413, 41300, "the body is over \(Self.maximumCommandBytes) bytes")
            }
            guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
                  let text = object["command"] as? String else {
                return Self.sinchError(400, 40000, #"the body must be a JSON object with "command": "mute", "unmute", "onhold" or "resume""#)
            }
            guard let command = ConferenceCommand(rawValue: text) else {
                return Self.sinchError(400, 40000, "unknown command \(Self.printable(text)): mute, unmute, onhold or resume")
            }
            let outcome = await callControl.manageParticipant(command, callID: callID, conferenceID: room, applicationKey: applicationKey)
            return Self.outcome(outcome, room: room, callID: callID)
        case "DELETE":
            return Self.outcome(await callControl.kick(callID: callID, conferenceID: room, applicationKey: applicationKey), room: room, callID: callID)
        default:
            return Self.sinchMethodNotAllowed(allow: "PATCH, DELETE")
        }
    }

    private static func outcome(_ outcome: ConferenceOutcome, room: String, callID: String?) -> HTTPResponse {
        switch outcome {
        case .done: (try? HTTPResponse(status: 204)) ?? HTTPResponse.json(status: 204, body: [])
        case .roomNotFound: roomNotFound(room)
        case .participantNotFound: sinchError(404, 40400, "conference \(printable(room)) has no participant \(printable(callID ?? ""))")
        }
    }

    private static func roomNotFound(_ room: String) -> HTTPResponse {
        sinchError(404, 40400, "no participant is in conference \(printable(room))")
    }

    static func sinchMethodNotAllowed(allow: String) -> HTTPResponse {
        var response = sinchError(405, 40500, "method not allowed here; use \(allow)")
        try? response.headers.set(name: "Allow", value: allow)
        return response
    }

    /// `{"status": status, "errorCode": code, "message": message, "reference": ...}` with
    /// `status`; the reference is new for each error, so a support request can name it.
    static func sinchError(_ status: Int, _ code: Int, _ message: String) -> HTTPResponse {
        json(status, SinchError(status: status, errorCode: code, message: message, reference: UUID().uuidString.lowercased()))
    }

    /// A response of the shared checks (`{"code", "message"}`, such as a 401) in the Sinch
    /// shape, headers kept.
    static func sinchShaped(_ response: HTTPResponse) -> HTTPResponse {
        guard let error = try? JSONDecoder().decode(RESTError.self, from: Data(response.body)) else { return response }
        let code = response.status == 401 ? 40100 : response.status >= 500 ? 50000 : response.status * 100
        var shaped = sinchError(response.status, code, error.message)
        for field in response.headers.fields where field.name.lowercased() != "content-length" && field.name.lowercased() != "content-type" {
            try? shaped.headers.set(name: field.name, value: field.value)
        }
        return shaped
    }
}

/// `GET /calling/v1/conferences/id/{id}`'s body.
struct ConferenceInfo: Encodable {
    var participants: [ConferenceParticipant]
}

/// The Sinch Voice API's error body: the HTTP status again, Sinch's five-digit code, a
/// message for people and a reference unique to this error.
struct SinchError: Codable, Hashable {
    var status: Int
    var errorCode: Int
    var message: String
    var reference: String
}
