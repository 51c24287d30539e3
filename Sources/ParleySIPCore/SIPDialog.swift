public import ParleySIP

/// A SIP dialog (RFC 3261 §12): the peer-to-peer state two user agents keep for an INVITE
/// session, and what builds the requests sent inside it.
///
/// A UAC makes one from its INVITE and a 101-199 response with a To tag (an early dialog)
/// or a 2xx (a confirmed one), `init(uacRequest:response:)`; a UAS from the INVITE it
/// received and the response it sends, `init(uasRequest:response:)`. It holds the
/// dialog's id (Call-ID and both tags), both CSeq numbers, both addresses, the remote
/// target (the peer's Contact, replaced by target refreshes) and the route set (the
/// Record-Route of the message that made it: reversed for a UAC, in order for a UAS).
///
/// Requests it builds (`makeRequest`, `makeAck`) follow §12.2.1.1: with no route set the
/// Request-URI is the remote target; with a loose router first (`;lr`) the Request-URI is
/// the remote target and the route set becomes Route; with a strict router first, the
/// Request-URI is that router's URI and the Route is the rest of the set followed by the
/// remote target. `nextHop` is the URI the request must be sent toward (§8.1.2): the first
/// route, else the remote target. Sending an ACK or a BYE anywhere else (the INVITE's
/// first hop, the 2xx's source address) is the classic bug this type exists to prevent.
public struct SIPDialog: Sendable, Hashable {
    /// Early (made by a provisional response) or confirmed (by a 2xx).
    public enum State: String, Sendable, Hashable {
        case early, confirmed
    }

    /// Call-ID, local tag and remote tag.
    public let id: SIPDialogID
    /// Early or confirmed.
    public private(set) var state: State
    /// The CSeq of the last request we sent in the dialog; nil before the first.
    public private(set) var localSequence: UInt32?
    /// The highest CSeq the peer sent in the dialog; nil before its first request.
    public private(set) var remoteSequence: UInt32?
    /// Our address with our tag: From in our requests.
    public let localAddress: SIPNameAddress
    /// The peer's address with its tag: To in our requests.
    public let remoteAddress: SIPNameAddress
    /// Where requests go: the peer's Contact, replaced by target refreshes.
    public private(set) var remoteTarget: SIPURI
    /// The Route entries of our requests, in the order they are written.
    public private(set) var routeSet: [SIPNameAddress]
    /// Our Contact, sent in requests and responses that refresh the target.
    public var localContact: SIPNameAddress
    /// Whether the dialog was set up over TLS with a sips Request-URI (§12.1.1).
    public let isSecure: Bool

    /// The dialog a UAC's `request` (an INVITE we sent) and a `response` to it make: a
    /// 101-199 response with a To tag gives an early dialog, a 2xx a confirmed one
    /// (§12.1.2). A response without Contact leaves the Request-URI as the remote target.
    public init(uacRequest request: SIPMessage, response: SIPMessage) throws(SIPDialogError) {
        guard let code = response.statusCode, (101..<300).contains(code) else {
            throw SIPDialogError(.cannotCreate, "only a 101-299 response makes a dialog")
        }
        let parts = try Self.read { () throws(SIPError) in
            (try request.from(), try response.to(), try request.callID(), try request.cseq(), try request.contacts(),
             try response.contacts(), try response.recordRoutes())
        }
        guard let from = parts.0, let localTag = from.tag else { throw SIPDialogError(.cannotCreate, "our request has no From tag") }
        guard let to = parts.1, let remoteTag = to.tag else { throw SIPDialogError(.cannotCreate, "the response has no To tag") }
        guard let callID = parts.2, let cseq = parts.3, let requestURI = request.requestURI else {
            throw SIPDialogError(.cannotCreate, "our request has no Call-ID, CSeq or Request-URI")
        }
        guard let localContact = parts.4?.addresses.first else { throw SIPDialogError(.cannotCreate, "our request has no Contact") }
        id = SIPDialogID(callID: callID, localTag: localTag, remoteTag: remoteTag)
        state = code < 200 ? .early : .confirmed
        localSequence = cseq.sequence
        remoteSequence = nil
        localAddress = from
        remoteAddress = to
        remoteTarget = parts.5?.addresses.first?.uri ?? requestURI
        routeSet = parts.6.reversed()
        self.localContact = localContact
        isSecure = requestURI.isSecure
    }

    /// The dialog a UAS's `request` (an INVITE received) and the `response` we send make:
    /// the response carries our To tag and Contact (§12.1.1). The remote target is the
    /// request's Contact, the route set its Record-Route in order.
    public init(uasRequest request: SIPMessage, response: SIPMessage) throws(SIPDialogError) {
        guard let code = response.statusCode, (101..<300).contains(code) else {
            throw SIPDialogError(.cannotCreate, "only a 101-299 response makes a dialog")
        }
        let parts = try Self.read { () throws(SIPError) in
            (try request.from(), try response.to(), try request.callID(), try request.cseq(), try request.contacts(),
             try response.contacts(), try request.recordRoutes())
        }
        guard let from = parts.0 else { throw SIPDialogError(.cannotCreate, "the request has no From") }
        guard let to = parts.1, let localTag = to.tag else { throw SIPDialogError(.cannotCreate, "our response has no To tag") }
        guard let callID = parts.2, let cseq = parts.3, let requestURI = request.requestURI else {
            throw SIPDialogError(.cannotCreate, "the request has no Call-ID, CSeq or Request-URI")
        }
        guard let remoteContact = parts.4?.addresses.first else { throw SIPDialogError(.cannotCreate, "the request has no Contact") }
        guard let localContact = parts.5?.addresses.first else { throw SIPDialogError(.cannotCreate, "our response has no Contact") }
        // An RFC 2543 peer may send no From tag: its dialog's remote tag is empty (§12.1.1).
        id = SIPDialogID(callID: callID, localTag: localTag, remoteTag: from.tag ?? "")
        state = code < 200 ? .early : .confirmed
        localSequence = nil
        remoteSequence = cseq.sequence
        localAddress = to
        remoteAddress = from
        remoteTarget = remoteContact.uri
        routeSet = parts.6
        self.localContact = localContact
        isSecure = requestURI.isSecure
    }

    /// The URI the next request must be sent toward (§8.1.2, §12.2.1.1): the first entry
    /// of the route set, else the remote target. The shell resolves it to a hop (RFC 3263).
    public var nextHop: SIPURI { routeSet.first?.uri ?? remoteTarget }

    // MARK: Responses to our requests

    /// Takes a response to `request`, a request of this dialog (the initial INVITE
    /// included): a 2xx to the INVITE that made an early dialog confirms it, with the
    /// route set taken again from its Record-Route (§13.2.2.4); a 2xx to a target refresh
    /// (re-INVITE, UPDATE...) and a provisional response to the initial INVITE replace the
    /// remote target with their Contact (§12.2.1.2). Responses of other dialogs (another
    /// To tag) change nothing and return false.
    @discardableResult
    public mutating func update(withResponse response: SIPMessage, to request: SIPMessage) -> Bool {
        guard let code = response.statusCode, let method = request.method,
              let to = try? response.to(), to.tag == id.remoteTag, (try? response.callID()) == id.callID else { return false }
        let contact = (try? response.contacts())?.addresses.first?.uri
        switch code {
        case 101..<200 where method == .invite && state == .early:
            if let contact { remoteTarget = contact }
        case 200..<300:
            if method == .invite, state == .early {
                state = .confirmed
                if let recordRoutes = try? response.recordRoutes() { routeSet = recordRoutes.reversed() }
            }
            if Self.isTargetRefresh(method), let contact { remoteTarget = contact }
        default:
            break
        }
        return true
    }

    // MARK: Requests from the peer

    /// Checks a request the peer sent in this dialog (§12.2.2) and takes its CSeq and, for a
    /// target refresh, its Contact. Throws `notInDialog` (answer 481) when its Call-ID or
    /// tags are not this dialog's, `outOfOrder` (answer 500) when its CSeq is below the
    /// last one. ACK and CANCEL carry the CSeq of the request they belong to and leave the
    /// numbers alone.
    public mutating func receive(request: SIPMessage) throws(SIPDialogError) {
        guard let method = request.method else { throw SIPDialogError(.notInDialog, "not a request") }
        let parts = try Self.read { () throws(SIPError) in (try request.callID(), try request.from(), try request.to(), try request.cseq()) }
        guard parts.0 == id.callID, (parts.1?.tag ?? "") == id.remoteTag, parts.2?.tag == id.localTag, let cseq = parts.3 else {
            throw SIPDialogError(.notInDialog, "Call-ID or tags are not this dialog's")
        }
        guard method != .ack, method != .cancel else { return }
        if let remoteSequence, cseq.sequence < remoteSequence {
            throw SIPDialogError(.outOfOrder, "CSeq \(cseq.sequence) is below \(remoteSequence)")
        }
        remoteSequence = cseq.sequence
        if Self.isTargetRefresh(method), let contact = (try? request.contacts())?.addresses.first {
            remoteTarget = contact.uri
        }
    }

    // MARK: Our requests

    /// A request in this dialog with the next local CSeq (§12.2.1.1): To, From, Call-ID,
    /// the Request-URI and Route as the route set says, our Contact for a target refresh,
    /// then `headers` in order, and the body. `via` is the top Via, with a fresh branch.
    /// ACK and CANCEL have builders of their own and are refused here.
    public mutating func makeRequest(
        _ method: SIPMethod, via: SIPVia, headers: SIPHeaders = SIPHeaders(), contentType: SIPContentType? = nil,
        body: [UInt8] = [], maxForwards: Int = 70
    ) throws(SIPDialogError) -> SIPMessage {
        guard method != .ack, method != .cancel else {
            throw SIPDialogError(.invalidArgument, "ACK and CANCEL take the CSeq of their INVITE")
        }
        let (next, overflow) = (localSequence ?? 0).addingReportingOverflow(1)
        guard !overflow else { throw SIPDialogError(.sequenceExhausted, "local CSeq at 2^32 - 1") }
        let request = try build(method, sequence: next, via: via, headers: headers, contentType: contentType, body: body,
                                maxForwards: maxForwards, contact: Self.isTargetRefresh(method))
        localSequence = next
        return request
    }

    /// The ACK for a 2xx to the INVITE numbered `inviteSequence` (§13.2.2.4): built like
    /// any request of the dialog (so it goes to the remote target through the route set,
    /// not where the INVITE went) with the INVITE's CSeq number. `headers` carries what
    /// must repeat the INVITE's (Authorization, Proxy-Authorization); the body is an SDP
    /// answer when the 2xx held the offer.
    public func makeAck(
        inviteSequence: UInt32, via: SIPVia, headers: SIPHeaders = SIPHeaders(), contentType: SIPContentType? = nil,
        body: [UInt8] = []
    ) throws(SIPDialogError) -> SIPMessage {
        try build(.ack, sequence: inviteSequence, via: via, headers: headers, contentType: contentType, body: body,
                  maxForwards: 70, contact: false)
    }

    private func build(
        _ method: SIPMethod, sequence: UInt32, via: SIPVia, headers extra: SIPHeaders, contentType: SIPContentType?,
        body: [UInt8], maxForwards: Int, contact: Bool
    ) throws(SIPDialogError) -> SIPMessage {
        let (requestURI, routes) = routing
        do throws(SIPError) {
            var request = try SIPMessage.request(
                method: method, uri: requestURI, via: via, from: localAddress, to: remoteAddress, callID: id.callID,
                cseq: sequence, maxForwards: maxForwards, contact: contact ? localContact : nil, contentType: contentType, body: body)
            // Route after the §8.1.1 fields, before the caller's.
            for route in routes { try request.headers.add(name: "Route", value: route.description) }
            for field in extra { try request.headers.add(name: field.name, value: field.value) }
            return request
        } catch {
            throw SIPDialogError(.invalidArgument, error.description)
        }
    }

    /// The Request-URI and Route headers of a request (§12.2.1.1).
    private var routing: (requestURI: SIPURI, routes: [SIPNameAddress]) {
        guard let first = routeSet.first else { return (Self.requestURI(remoteTarget), []) }
        if first.uri.isLooseRouting { return (Self.requestURI(remoteTarget), routeSet) }
        // A strict router (RFC 2543) wants itself as the Request-URI and the remote
        // target as the last Route.
        var routes = Array(routeSet.dropFirst())
        if let target = try? SIPNameAddress(uri: remoteTarget) { routes.append(target) }
        return (Self.requestURI(first.uri), routes)
    }

    /// `uri` without the parts a Request-URI may not carry (§19.1.5: headers).
    private static func requestURI(_ uri: SIPURI) -> SIPURI {
        var uri = uri
        uri.removeHeaders()
        return uri
    }

    /// Methods that replace the remote target: INVITE and UPDATE (RFC 3311), SUBSCRIBE,
    /// NOTIFY (RFC 6665) and REFER (RFC 3515).
    static func isTargetRefresh(_ method: SIPMethod) -> Bool {
        switch method {
        case .invite, .update, .subscribe, .notify, .refer: true
        default: false
        }
    }

    private static func read<T>(_ body: () throws(SIPError) -> T) throws(SIPDialogError) -> T {
        do throws(SIPError) {
            return try body()
        } catch {
            throw SIPDialogError(.cannotCreate, error.description)
        }
    }
}
