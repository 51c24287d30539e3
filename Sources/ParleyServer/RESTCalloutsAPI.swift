import Foundation
import ParleyHTTP
import ParleySignaling

/// `POST /calling/v1/callouts`, the Sinch Voice API's callout endpoint (docs/rest.md,
/// "Callouts"). `conferenceCallout` calls an app user (`destination` `{"type":
/// "username", "endpoint": USER}`) into a conference room, ringing their devices or
/// pushing them as any call does; `ttsCallout` and `customCallout` call a phone number
/// or SIP address that the server plays to itself (`ServerCallouts`; the request is read
/// by `serverCallout(from:)`). Each answers `{"callId": ...}` at once; destination types
/// not built (a conference callout to a number, a ttsCallout to an app user) are 501.
extension RESTAPI {
    /// The largest callout body read.
    static let maximumCalloutBytes = 16 * 1024

    /// A request to `/calling/v1/callouts`, once authenticated as `applicationKey`.
    func calloutResponse(to request: HTTPRequest, applicationKey: String) async -> HTTPResponse {
        guard request.method == "POST" else {
            var response = Self.sinchError(405, 40500, "method not allowed here; use POST")
            try? response.headers.set(name: "Allow", value: "POST")
            return response
        }
        guard request.body.count <= Self.maximumCalloutBytes else {
            return Self.sinchError(413, 41300, "the body is over \(Self.maximumCalloutBytes) bytes")
        }
        let outcome: CalloutOutcome
        if Self.calloutMethod(of: request.body)?.lowercased() == "conferencecallout" {
            switch Self.conferenceCallout(from: request.body) {
            case .success(let callout): outcome = await callControl.conferenceCallout(callout, applicationKey: applicationKey)
            case .failure(let refusal): return refusal.response
            }
        } else {
            switch Self.serverCallout(from: request.body) {
            case .success(let callout): outcome = await callControl.serverCallout(callout, applicationKey: applicationKey)
            case .failure(let refusal): return refusal.response
            }
        }
        switch outcome {
        case .placed(let callID):
            return Self.json(200, CalloutResult(callId: callID))
        case .refused(let code, let message):
            let (status, errorCode) = Self.sinchStatus(of: code)
            return Self.sinchError(status, errorCode, message)
        }
    }

    /// A callout request refused before anything was placed.
    struct CalloutRefusal: Error {
        var response: HTTPResponse
        init(_ status: Int, _ code: Int, _ message: String) { response = RESTAPI.sinchError(status, code, message) }
    }

    /// The conference callout a body asks for, or why it cannot be placed.
    static func conferenceCallout(from body: [UInt8]) -> Result<ConferenceCalloutRequest, CalloutRefusal> {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            return .failure(CalloutRefusal(400, 40000, "the body must be a JSON object"))
        }
        guard let method = object["method"] as? String else {
            return .failure(CalloutRefusal(400, 40000, #"the body must name a "method" (conferenceCallout)"#))
        }
        guard method.lowercased() == "conferencecallout" else {
            return .failure(CalloutRefusal(400, 40000, "unknown callout method \(printable(method))"))
        }
        guard let details = object["conferenceCallout"] as? [String: Any] else {
            return .failure(CalloutRefusal(400, 40000, #"a conferenceCallout needs a "conferenceCallout" object"#))
        }
        guard let room = details["conferenceId"] as? String else {
            return .failure(CalloutRefusal(400, 40000, #"a conferenceCallout needs a "conferenceId" string"#))
        }
        if let problem = SignalingMessage.Address.conference(room).formatProblem {
            return .failure(CalloutRefusal(400, 40000, "conference id \(printable(room)) is not valid: \(problem)"))
        }
        guard let destination = details["destination"] as? [String: Any], let type = destination["type"] as? String,
              let endpoint = destination["endpoint"] as? String else {
            return .failure(CalloutRefusal(400, 40000, #"a conferenceCallout needs a "destination" with "type" and "endpoint" strings"#))
        }
        guard type.lowercased() == "username" else {
            if ["number", "did", "sip"].contains(type.lowercased()) {
                return .failure(CalloutRefusal(501, 50100, "conference callouts to destination type \(printable(type)) are not supported by this server yet; username is"))
            }
            return .failure(CalloutRefusal(400, 40000, "unknown destination type \(printable(type))"))
        }
        if let problem = SignalingMessage.Address.user(endpoint).formatProblem {
            return .failure(CalloutRefusal(400, 40000, "user id \(printable(endpoint)) is not valid: \(problem)"))
        }
        var displayName: String?
        if let cli = details["cli"] {
            guard let text = cli as? String, text.utf8.count <= 255 else {
                return .failure(CalloutRefusal(400, 40000, #""cli" must be a string of at most 255 bytes"#))
            }
            displayName = text.isEmpty ? nil : text
        }
        return .success(ConferenceCalloutRequest(conferenceID: room, userID: endpoint, displayName: displayName))
    }

    /// The `method` a callout body names, when it is a JSON object naming one.
    static func calloutMethod(of body: [UInt8]) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["method"] as? String
    }

    /// The HTTP status and Sinch error code of a refusal by the call engine.
    static func sinchStatus(of code: SignalingErrorCode) -> (Int, Int) {
        switch code {
        case .destinationNotFound: (404, 40400)
        case .destinationUnavailable: (409, 40900)
        case .destinationNotAllowed: (403, 40300)
        case .tooManyCalls: (429, 42900)
        case .tooLarge: (413, 41300)
        case .badRequest: (400, 40000)
        case .notImplemented: (501, 50100)
        default: (500, 50000)
        }
    }
}

/// `POST /calling/v1/callouts`' answer.
struct CalloutResult: Encodable {
    var callId: String
}
