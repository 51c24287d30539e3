import Foundation
import ParleyHTTP
import ParleyStore
import ParleyVoiceAPI

/// The Sinch Voice API's call endpoints (docs/rest.md, "Calls in the Sinch shape"), so a
/// backend written for Sinch reads and manages Parley's calls:
///
/// - `GET /calling/v1/calls/id/{callId}`: the call's information (`SinchCallInformation`),
///   live or ended;
/// - `PATCH /calling/v1/calls/id/{callId}` with SVAML (`{"instructions": [...], "action":
///   {"name": "hangup" | "continue" | "park"}}`): `hangup` ends a live call (204, its DiCE
///   says MANAGERHANGUP), `continue` leaves it as it is (204);
/// - `PATCH /calling/v1/calls/id/{callId}/leg/{caller|callee|both}`: instructions to one
///   leg.
///
/// A call the server answered itself (an ICE answered with prompts, a menu or `park`,
/// docs/backend.md "Prompts, menus and park") takes every update through its prompt
/// player: `say`/`playFiles`, `park`, `continue` (its prompts stop), `hangup`, and
/// `connectPstn`/`connectSip` (a Parley extension: the call goes on to a call out). On
/// other calls `park`, the `connect...` actions and the `say`/`playFiles` instructions
/// answer 501 50100: there is no prompt player in an app's or a bridged call's media yet.
extension RESTAPI {
    /// The largest SVAML body a PATCH may carry (SVAML's own limit is larger; an update is small).
    static let maximumCallUpdateBytes = 16 * 1024

    /// A request to `/calling/v1/calls/...` (`segments` after `calling/v1`), once
    /// authenticated as `applicationKey`.
    func voiceCallResponse(to request: HTTPRequest, segments: [Substring], applicationKey: String) async -> HTTPResponse {
        guard segments.count >= 3, segments[0] == "calls", segments[1] == "id", !segments[2].isEmpty else {
            return Self.sinchError(404, 40400, "no resource at \(Self.printable(request.path))")
        }
        let callID = String(segments[2])
        switch segments.count {
        case 3:
            switch request.method {
            case "GET", "HEAD": return await voiceCallInformation(callID, applicationKey: applicationKey)
            case "PATCH": return await updateCall(callID, leg: nil, body: request.body, applicationKey: applicationKey)
            default: return Self.sinchMethodNotAllowed(allow: "GET, HEAD, PATCH")
            }
        case 5 where segments[3] == "leg":
            guard ["caller", "callee", "both"].contains(segments[4]) else {
                return Self.sinchError(400, 40000, "the leg must be caller, callee or both, not \(Self.printable(segments[4]))")
            }
            guard request.method == "PATCH" else { return Self.sinchMethodNotAllowed(allow: "PATCH") }
            return await updateCall(callID, leg: String(segments[4]), body: request.body, applicationKey: applicationKey)
        default:
            return Self.sinchError(404, 40400, "no resource at \(Self.printable(request.path))")
        }
    }

    private func voiceCallInformation(_ callID: String, applicationKey: String) async -> HTTPResponse {
        let found: (CallRecordWithSide)?
        do {
            found = try await store.perform { store throws(StoreError) -> CallRecordWithSide? in
                guard let call = try store.call(id: callID, applicationKey: applicationKey) else { return nil }
                let events = try store.callEvents(callId: callID, applicationKey: applicationKey)
                let side = events
                    .last { $0.kind == CallEngine.hangUpEventKind }
                    .flatMap { $0.detail["by"] }
                    .flatMap(SinchCallOutcome.HangUpSide.init(rawValue:))
                let outcome = events.last { $0.kind == CallRecorder.outcomeEventKind }.flatMap { SinchCallOutcome(recorded: $0.detail) }
                return CallRecordWithSide(record: call, side: side, outcome: outcome)
            }
        } catch {
            return Self.sinchShaped(storeFailure(error))
        }
        guard let found else { return Self.sinchError(404, 40400, "call \(Self.printable(callID)) not found") }
        return Self.json(200, SinchCallInformation(record: found.record, hungUpBy: found.side, recorded: found.outcome, nowMilliseconds: clock()))
    }

    private struct CallRecordWithSide: Sendable {
        var record: StoredCall
        var side: SinchCallOutcome.HangUpSide?
        /// The outcome the call's DiCE gave, when it had one.
        var outcome: SinchCallOutcome?
    }

    /// A PATCH: the SVAML update of a live call (to one leg when `leg` is given).
    private func updateCall(_ callID: String, leg: String?, body: [UInt8], applicationKey: String) async -> HTTPResponse {
        guard body.count <= Self.maximumCallUpdateBytes else {
            return Self.sinchError(413, 41300, "the body is over \(Self.maximumCallUpdateBytes) bytes")
        }
        let update: SVAMLResponse
        do throws(VoiceAPIError) {
            if leg != nil {
                // A leg update carries instructions only; Sinch's examples send no action.
                update = try Self.legUpdate(body)
            } else {
                update = try SVAMLResponse.decode(body, answering: .callUpdate)
            }
        } catch {
            return Self.sinchError(400, 40000, "the body is not a valid SVAML call update: \(error)")
        }
        // A call the server answered itself (prompts, a menu, park) takes every update:
        // its prompts are the only leg there is.
        if await callControl.updateAnsweredCall(callID: callID, applicationKey: applicationKey, svaml: update) {
            return (try? HTTPResponse(status: 204)) ?? HTTPResponse.json(status: 204, body: [])
        }
        if let instruction = update.instructions.first {
            return Self.sinchError(501, 50100, "the \(instruction.name.rawValue) instruction is only carried out on calls the server answered (prompts, menus, park)")
        }
        switch update.action {
        case .hangup:
            switch await callControl.hangUp(callID: callID, applicationKey: applicationKey) {
            case .hungUp: return (try? HTTPResponse(status: 204)) ?? HTTPResponse.json(status: 204, body: [])
            case .notFound: return Self.sinchError(404, 40400, "call \(Self.printable(callID)) not found")
            case .alreadyEnded: return Self.sinchError(409, 40900, "call \(Self.printable(callID)) has already ended")
            }
        case .continue:
            return await liveCallCheck(callID, applicationKey: applicationKey)
        default:
            return Self.sinchError(501, 50100, "the \(update.action.name.rawValue) action is only carried out on calls the server answered (prompts, menus, park)")
        }
    }

    /// 204 when `callID` is a live call of the application, else the Sinch error.
    private func liveCallCheck(_ callID: String, applicationKey: String) async -> HTTPResponse {
        do {
            let record = try await store.perform { store throws(StoreError) in try store.call(id: callID, applicationKey: applicationKey) }
            guard let record else { return Self.sinchError(404, 40400, "call \(Self.printable(callID)) not found") }
            guard record.state != .ended else { return Self.sinchError(409, 40900, "call \(Self.printable(callID)) has already ended") }
            return (try? HTTPResponse(status: 204)) ?? HTTPResponse.json(status: 204, body: [])
        } catch {
            return Self.sinchShaped(storeFailure(error))
        }
    }

    /// A leg update's body: `instructions`, and an action only if the body has one.
    private static func legUpdate(_ body: [UInt8]) throws(VoiceAPIError) -> SVAMLResponse {
        if let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any], object["action"] == nil {
            var withAction = object
            withAction["action"] = ["name": "continue"]
            if let data = try? JSONSerialization.data(withJSONObject: withAction) {
                return try SVAMLResponse.decode(Array(data), answering: .callUpdate)
            }
        }
        return try SVAMLResponse.decode(body, answering: .callUpdate)
    }
}
