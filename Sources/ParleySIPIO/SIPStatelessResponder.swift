public import ParleySIP

/// The temporary transaction user of `parleyd --sip-listen`: answers each request on its
/// own, keeping no state, until the transaction layer (ParleySIPCore) and SIP calls take
/// its place behind `SIPTransportDelegate`.
///
/// What it answers, in RFC 3261 §8.2's order of checks:
///
/// | Request | Answer |
/// |---|---|
/// | ACK | nothing (§17.2.1: an ACK is never answered) |
/// | a method we do not know | 501 Not Implemented, with Allow (§21.5.2) |
/// | REGISTER, SUBSCRIBE, NOTIFY, MESSAGE, REFER, INFO, UPDATE, PRACK | 405 Method Not Allowed, with Allow (§8.2.1) |
/// | a Require we do not support (we support none yet) | 420 Bad Extension, with Unsupported (§8.2.2.3) |
/// | a body that is not SDP (alone or in a multipart), or encoded | 415 Unsupported Media Type, with Accept / Accept-Encoding (§8.2.3) |
/// | OPTIONS | 200 OK with Allow, Accept and Supported (§11.2) |
/// | INVITE | 403 Forbidden "Inbound Calls Not Accepted", with a Warning (399) |
/// | BYE, CANCEL | 481 Call/Transaction Does Not Exist (§15.1.2, §9.2: no dialog, no transaction) |
///
/// Why 403 for INVITE: it is final and definitive, so a caller or trunk neither waits
/// nor retries, and it says what is true, that this server refuses calls, not that it
/// does not understand INVITE (405/501 would make a peer stop sending INVITEs at all) nor
/// that a callee is away for now (480 invites a retry, and some carriers hunt on it).
/// Calls coming in will be refused with 403 by policy later too, from sources that are not
/// allowed to call. Responses that arrive (nothing here sends requests) have no taker.
///
/// Every answer carries a To tag derived from the request (`SIPStatelessTag`), so a
/// retransmitted request gets the same answer; no 100 Trying is sent (the final answer
/// goes at once).
public final class SIPStatelessResponder: SIPTransportDelegate {
    /// What Allow lists: the methods a user agent handles, INVITE and its companions
    /// included (an INVITE is understood, and refused by policy).
    public static let allowedMethods: [SIPMethod] = [.invite, .ack, .cancel, .bye, .options]
    /// The methods answered 405 (known, not served here).
    static let refusedMethods: [SIPMethod] = [.register, .subscribe, .notify, .message, .refer, .info, .update, .prack]

    public init() {}

    public func transport(_ transport: SIPTransportServer, received message: SIPMessage, from source: SIPMessageSource) -> SIPDelivery {
        guard message.isRequest else { return .noTaker }
        if let response = Self.response(to: message) {
            transport.sendResponse(response, to: source)
        }
        return .taken
    }

    /// The answer to `request` (nil for an ACK, or for something that is not a request).
    public static func response(to request: SIPMessage) -> SIPMessage? {
        guard let method = request.method, method != .ack else { return nil }
        let tag = SIPStatelessTag.make(for: request.headers)
        let allow = allowedMethods.map(\.token).joined(separator: ", ")
        func answer(_ code: Int, _ reason: String? = nil, _ fields: [(String, String)] = []) -> SIPMessage? {
            guard var response = try? request.makeResponse(statusCode: code, reasonPhrase: reason, toTag: tag) else { return nil }
            for (name, value) in fields { try? response.headers.add(name: name, value: value) }
            return response
        }
        if case .extension = method { return answer(501, nil, [("Allow", allow)]) }
        if refusedMethods.contains(method) { return answer(405, nil, [("Allow", allow)]) }
        do throws(SIPError) {
            if method != .cancel {
                let unsupported = try request.unsupportedRequirements(supported: [])
                if !unsupported.isEmpty { return answer(420, nil, [("Unsupported", unsupported.joined(separator: ", "))]) }
            }
            if let encoding = request.headers.first("content-encoding"), encoding.lowercased() != "identity" {
                return answer(415, nil, [("Accept-Encoding", "identity")])
            }
            if !request.body.isEmpty, try request.sessionDescription() == nil {
                return answer(415, nil, [("Accept", "application/sdp")])
            }
        } catch {
            return try? error.makeResponse(toTag: tag)
        }
        switch method {
        case .options:
            return answer(200, nil, [("Allow", allow), ("Accept", "application/sdp"), ("Supported", "")])
        case .invite:
            return answer(403, "Inbound Calls Not Accepted", [("Warning", #"399 parleyd "this server takes no inbound SIP calls yet""#)])
        default:
            // BYE and CANCEL: nothing here holds a dialog or a transaction.
            return answer(481)
        }
    }
}
