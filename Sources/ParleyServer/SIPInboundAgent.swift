import Foundation
import ParleyCallCore
import ParleyCallModel
import ParleyNetCore
import ParleySIP
import ParleySIPCore
import ParleySIPIO
import ParleySignaling
import Synchronization

/// The inbound half of parleyd's SIP user agent: INVITEs from the SIP trunk (or a routed
/// SIP host) to one of the applications' numbers (docs/sip.md, "Calls in").
///
/// A new INVITE is taken from a host parleyd already sends to (the trunk, a `--sip-route`
/// host, the outbound proxy: compared by address), or from a SIP peer of
/// `--sip-peers-file` anywhere once its credentials answer a digest challenge (RFC 3261
/// §22.2: a stateless 401 with SHA-256 and MD5 challenges, RFC 8760), since anyone else
/// could call into the applications; others get the stateless 403 as before (or, with
/// peers configured, the 401, and a 403 for wrong credentials). A taken INVITE is
/// a `SIPInboundCall` (100 Trying at once); its Request-URI's number is looked up in the
/// `--sip-number` rules: a number without a rule gets 404, an INVITE without an SDP offer
/// 488; a number the application's backend routes is offered with no target (the engine
/// asks the backend). Otherwise the engine is offered the call
/// (`InboundSIPCall`), whose caller is a `SIPParty` named by the number or SIP address
/// it calls from (its P-Asserted-Identity, else its From); what the engine then tells
/// that party becomes 180, 200 with the anchor's answer, a final failure or BYE.
///
/// Threads: the transport's loop only, as the outbound half.
final class SIPInboundAgent: @unchecked Sendable {
    // @unchecked: everything mutable is touched on the transport's loop only.

    private final class Entry {
        var call: SIPInboundCall
        let party: SIPParty
        /// The anchor's answer to the INVITE's offer, once the caller's leg is ready.
        var answerSDP: String?
        /// Whether a 183 carried that answer (a bridge's early media): no 180 after it, since
        /// a phone may play its own ringback on 180 over the far side's announcement.
        var sentEarlyMedia = false
        /// Answers re-INVITEs and UPDATEs with offers, once we answered.
        var offerAnswer: SIPRemoteOfferAnswer?
        /// Holds and resumes of the app party, for our re-INVITEs.
        var hold = SIPHoldRequests()
        var timer: (id: TimerID, at: ContinuousClock.Instant)?
        /// Counted in `callCount` until its call ended.
        var counted = true

        init(call: SIPInboundCall, party: SIPParty) {
            self.call = call
            self.party = party
        }
    }

    let configuration: SIPGatewayConfiguration
    let numbers: NumberRouteTable
    private let log: ServerLog
    private var calls: [String: Entry] = [:]
    private var byParty: [SIPParty: String] = [:]
    private var filter = SIPInboundInviteFilter(random: SystemRandomNumberGenerator())
    /// The addresses new INVITEs are taken from.
    private let trustedHosts: Set<[UInt8]>
    /// Challenges and checks the SIP peers' INVITEs; nil without peers.
    private var peerDigest: SIPDigestServer?
    private var random = SystemRandomNumberGenerator()
    /// Calls not yet ended, read from any thread.
    let active = Atomic<Int>(0)

    init(configuration: SIPGatewayConfiguration, numbers: NumberRouteTable, log: ServerLog) {
        self.configuration = configuration
        self.numbers = numbers
        self.log = log
        var hosts: [SIPHop] = Array(configuration.routes.values)
        if let trunk = configuration.trunk { hosts.append(trunk.hop) }
        if let proxy = configuration.outboundProxy { hosts.append(proxy) }
        trustedHosts = Set(hosts.compactMap { $0.host.addressBytes })
        if !configuration.peers.isEmpty {
            var generator = SystemRandomNumberGenerator()
            let secret = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            peerDigest = try? SIPDigestServer(configuration: .init(realm: configuration.peerRealm, algorithms: configuration.peerAlgorithms), secret: secret)
            if peerDigest == nil { log.error("sip.peers.disabled", ["reason": "the realm \(configuration.peerRealm) is not usable"]) }
        }
    }

    /// Whether `party` is the caller of a call in over SIP (the loop).
    func handles(_ party: SIPParty) -> Bool { byParty[party] != nil }

    // MARK: Messages (the transport's loop)

    /// Takes a message of an inbound call, or a new INVITE this agent answers; nil when it
    /// is neither (the outbound half or the stateless responder has it).
    func receive(_ message: SIPMessage, from source: SIPMessageSource, hop: SIPHop, local: SIPInboundCall.Local,
                 transport: SIPTransportServer, sink: Sink) -> SIPDelivery? {
        guard let callID = try? message.callID() else { return nil }
        let now = transport.loop.now
        if let entry = calls[callID] {
            run(entry.call.receive(message, from: hop, now: now), for: entry, transport: transport, sink: sink)
            return .taken
        }
        guard message.isRequest, message.method == .invite, !numbers.isEmpty else { return nil }
        if !trustedHosts.contains(source.remoteAddress.hostBytes) {
            guard peerDigest != nil else { return nil }
            guard let peer = authenticatedPeer(message, from: source, hop: hop, transport: transport) else { return .taken }
            log.info("sip.inbound.peer", ["from": source.remoteAddress.description, "peer": peer])
        }
        switch filter.check(message, from: hop, now: now) {
        case .accept:
            break
        case .retransmission:
            return .taken
        case .answer(let response, let to, let reason):
            log.info("sip.inbound.refused", ["from": source.remoteAddress.description, "reason": reason])
            send(response, to: to, transport: transport)
            return .taken
        case .drop(let reason):
            log.info("sip.inbound.dropped", ["from": source.remoteAddress.description, "reason": reason])
            return .taken
        }
        let call: SIPInboundCall
        do {
            call = try SIPInboundCall(
                invite: message, from: hop, local: local, configuration: SIPInboundCall.Configuration(timers: configuration.call.timers),
                resolver: SIPLiteralHopResolver(routes: configuration.routes), random: SystemRandomNumberGenerator())
        } catch {
            log.info("sip.inbound.dropped", ["from": source.remoteAddress.description, "reason": error.description])
            filter.forget(callID: callID)
            return .taken
        }
        let party = SIPParty(callID: UUID().uuidString.lowercased(), destination: Self.callerDestination(of: call))
        let entry = Entry(call: call, party: party)
        calls[callID] = entry
        byParty[party] = callID
        active.add(1, ordering: .relaxed)
        do {
            run(try entry.call.start(now: now), for: entry, transport: transport, sink: sink)
        } catch {
            log.info("sip.inbound.dropped", ["from": source.remoteAddress.description, "reason": error.description])
            finish(entry, transport: transport)
            return .taken
        }
        let dialled = call.requestURI.user ?? ""
        log.info("sip.inbound.invite", ["call": party.callID, "sipCallId": callID, "to": dialled, "from": party.description])
        guard let number = NumberRoute.e164(dialled), let route = numbers.route(for: number) else {
            reject(entry, status: 404, reason: "Not Found", why: "no --sip-number rule for \(dialled)", transport: transport, sink: sink)
            return .taken
        }
        let target: PartyAddress?
        switch route.target {
        case .user(let userID): target = .user(userID)
        case .conference(let room): target = .conference(room)
        case .backend: target = nil
        case .phone(let number): target = .phone(number)
        case .sip(let address): target = .sip(address)
        }
        guard let offer = call.offer else {
            reject(entry, status: 488, reason: "Not Acceptable Here", why: "the INVITE has no SDP offer", transport: transport, sink: sink)
            return .taken
        }
        sink.offered(InboundSIPCall(
            party: party, dialled: number, applicationKey: route.applicationKey, target: target, offer: String(decoding: offer, as: UTF8.self),
            headers: SIPUserAgent.appHeaders(call.callHeaders), sipCallID: callID))
        return .taken
    }

    /// The SIP peer whose credentials `invite` carries, or nil once it was answered: a 401
    /// with fresh challenges (no credentials, or a stale nonce), or a 403 (wrong
    /// credentials; the reason is logged, not sent). Answered statelessly (RFC 3261
    /// §8.2.7), so a stranger's INVITEs cost no state; its ACK finds no call and is dropped.
    private func authenticatedPeer(_ invite: SIPMessage, from source: SIPMessageSource, hop: SIPHop, transport: SIPTransportServer) -> String? {
        guard var digest = peerDigest else { return nil }
        let peers = configuration.peers
        let nowSeconds = ServerClock.now().unixMilliseconds / 1000
        let values = invite.headers.values("Authorization")
        let verdict = digest.verify(authorizationValues: values, method: invite.method?.token ?? "INVITE",
                                    requestURI: invite.requestURI?.description ?? "", body: invite.body,
                                    nowUnixSeconds: nowSeconds, password: { peers[$0] })
        peerDigest = digest
        let response: SIPMessage?
        switch verdict {
        case .accepted(let username):
            return username
        case .challenge(let stale):
            response = try? {
                var challenge = try invite.makeResponse(statusCode: 401, toTag: SIPIdentifier.tag(using: &random))
                for value in try digest.challengeValues(stale: stale, nowUnixSeconds: nowSeconds, using: &random) {
                    try challenge.headers.add(name: "WWW-Authenticate", value: value)
                }
                return challenge
            }()
            log.info("sip.inbound.challenged", ["from": source.remoteAddress.description, "stale": String(stale)])
        case .forbidden(let refusal):
            response = try? invite.makeResponse(statusCode: 403, toTag: SIPIdentifier.tag(using: &random))
            log.info("sip.inbound.refused", ["from": source.remoteAddress.description, "reason": refusal.description])
        }
        if let response {
            _ = send(response, to: SIPTransactionLayer.responseHop(via: try? response.topVia(), source: hop), transport: transport)
        }
        return nil
    }

    /// A message of an inbound call could not be sent.
    func couldNotSend(_ message: SIPMessage, transport: SIPTransportServer, sink: Sink) -> Bool {
        guard let callID = try? message.callID(), let entry = calls[callID] else { return false }
        run(entry.call.transportFailed(sending: message, now: transport.loop.now), for: entry, transport: transport, sink: sink)
        return true
    }

    /// What the engine tells the caller of an inbound call (the loop).
    func tell(_ party: SIPParty, _ notification: CallNotification, transport: SIPTransportServer, sink: Sink) {
        guard let callID = byParty[party], let entry = calls[callID] else { return }
        let now = transport.loop.now
        do throws(SIPInboundCallError) {
            switch notification {
            case .mediaReady(_, let sdp):
                entry.answerSDP = sdp
            case .ringing:
                guard entry.call.phase == .proceeding, !entry.sentEarlyMedia else { return }
                run(try entry.call.ring(now: now), for: entry, transport: transport, sink: sink)
            case .earlyMedia:
                guard entry.call.phase == .proceeding, let sdp = entry.answerSDP else { return }
                entry.sentEarlyMedia = true
                log.info("sip.inbound.early_media", ["call": party.callID, "sipCallId": callID])
                run(try entry.call.ring(earlySDP: Array(sdp.utf8), now: now), for: entry, transport: transport, sink: sink)
            case .answered:
                guard entry.call.phase == .proceeding, let sdp = entry.answerSDP else { return }
                entry.offerAnswer = SIPRemoteOfferAnswer(localSDP: sdp, remoteAnswer: sdp)
                log.info("sip.inbound.answered", ["call": party.callID, "sipCallId": callID])
                run(try entry.call.answer(sdp: Array(sdp.utf8), now: now), for: entry, transport: transport, sink: sink)
            case .ended(_, let cause, let error, _):
                if entry.call.phase == .proceeding {
                    let (status, reason) = Self.status(for: cause, error: error)
                    run(try entry.call.reject(statusCode: status, reasonPhrase: reason, now: now), for: entry, transport: transport, sink: sink)
                } else {
                    run(entry.call.hangUp(now: now), for: entry, transport: transport, sink: sink)
                }
            case .held(_, let held, _, _):
                entry.hold.want(held)
                run(offerHold(entry, now: now), for: entry, transport: transport, sink: sink)
            case .offered, .progress, .established, .dtmf, .talking:
                break
            }
        } catch {
            log.warning("sip.inbound.refused", ["call": party.callID, "reason": error.description])
        }
    }

    /// Sends the re-INVITE the wanted hold needs (RFC 3264 §8.4), unless an offer is open
    /// (or our 200 is not acknowledged yet): it then goes once that is done.
    private func offerHold(_ entry: Entry, now: ContinuousClock.Instant) -> [SIPInboundCall.Output] {
        guard let current = entry.offerAnswer?.localHold, let held = entry.hold.next(current: current),
              let sdp = entry.offerAnswer?.holdOffer(held) else { return [] }
        do {
            let out = try entry.call.offer(sdp: sdp, now: now)
            entry.hold.sent(held)
            log.info("sip.reinvite", ["call": entry.party.callID, "hold": String(held)])
            return out
        } catch {
            entry.offerAnswer?.offerRefused()
            if error.kind != .offerPending && error.kind != .invalidState {
                entry.hold.abandon()
                log.warning("sip.reinvite.failed", ["call": entry.party.callID, "hold": String(held), "reason": error.description])
            }
            return []
        }
    }

    /// The final status a call that ends before its answer is refused with.
    /// A bridge's call out that failed with a SIP status passes it on (`SIPBridgeStatus`).
    static func status(for cause: CallEndCause, error: SignalingMessage.CallError?) -> (Int, String) {
        let code = error?.code
        switch cause {
        case .denied: return (486, "Busy Here")
        case .canceled: return (487, "Request Terminated")
        case .error:
            if let error, let status = SIPCallEvent.status(of: error) { return SIPBridgeStatus.forCaller(calleeStatus: status) }
            switch code {
            case .destinationNotFound?: return (404, "Not Found")
            case .destinationNotAllowed?: return (403, "Forbidden")
            case .destinationUnavailable?: return (480, "Temporarily Unavailable")
            case .tooManyCalls?: return (503, "Service Unavailable")
            case .mediaFailed?: return (488, "Not Acceptable Here")
            case .badRequest?, .tooLarge?: return (400, "Bad Request")
            default: return (500, "Server Internal Error")
            }
        default: return (480, "Temporarily Unavailable")
        }
    }

    // MARK: Running a call

    private func reject(_ entry: Entry, status: Int, reason: String, why: String, transport: SIPTransportServer, sink: Sink) {
        log.info("sip.inbound.refused", ["call": entry.party.callID, "status": String(status), "reason": why])
        let outputs = (try? entry.call.reject(statusCode: status, reasonPhrase: reason, now: transport.loop.now)) ?? []
        run(outputs, for: entry, transport: transport, sink: sink)
    }

    private func run(_ outputs: [SIPInboundCall.Output], for entry: Entry, transport: SIPTransportServer, sink: Sink) {
        var pending = outputs
        while !pending.isEmpty {
            switch pending.removeFirst() {
            case .send(let message, let hop):
                if !send(message, to: hop, transport: transport) {
                    log.warning("sip.send.unroutable", ["call": entry.party.callID, "hop": hop.description])
                    pending.append(contentsOf: entry.call.transportFailed(sending: message, now: transport.loop.now))
                }
            case .event(let event):
                pending.append(contentsOf: handle(event, of: entry, transport: transport, sink: sink))
            }
        }
        schedule(entry, transport: transport, sink: sink)
    }

    @discardableResult
    private func send(_ message: SIPMessage, to hop: SIPHop, transport: SIPTransportServer) -> Bool {
        guard let address = SocketAddress(hostBytes: hop.host.addressBytes ?? [], port: hop.port) else { return false }
        transport.send(message, to: address, transport: SIPUserAgent.transport(hop.transport),
                       serverName: hop.transport == .tls ? hop.host.text : nil)
        return true
    }

    private func handle(_ event: SIPInboundCall.Event, of entry: Entry, transport: SIPTransportServer, sink: Sink) -> [SIPInboundCall.Output] {
        let party = entry.party
        let now = transport.loop.now
        switch event {
        case .remoteOffer(let method, let sdp):
            guard let sdp else {
                let ours = entry.offerAnswer.map { $0.localSDP.serializedBytes() } ?? Array((entry.answerSDP ?? "").utf8)
                return (try? entry.call.answerRemoteOffer(sdp: ours, now: now)) ?? []
            }
            let heldBefore = entry.offerAnswer?.remoteHolds ?? false
            if let answer = entry.offerAnswer?.answer(to: sdp) {
                log.info("sip.reoffer.answered", ["call": party.callID, "method": method.token])
                if let held = entry.offerAnswer?.remoteHolds, held != heldBefore { sink.report(.held(held), party) }
                return (try? entry.call.answerRemoteOffer(sdp: answer, now: now)) ?? []
            }
            log.warning("sip.reoffer.refused", ["call": party.callID, "method": method.token, "status": "488"])
            return (try? entry.call.rejectRemoteOffer(statusCode: 488, now: now)) ?? []
        case .dtmf(let digits):
            log.info("sip.info.dtmf", ["call": party.callID, "digits": String(digits.count)])
            sink.report(.dtmf(digits: digits), party)
        case .localOfferAnswered:
            entry.hold.answered()
            entry.offerAnswer?.offerAnswered()
            log.info("sip.reinvite.answered", ["call": party.callID])
            return offerHold(entry, now: now)
        case .localOfferRefused(let status):
            entry.hold.refused()
            entry.offerAnswer?.offerRefused()
            // The old session goes on (RFC 3261 §14.1); the server's media still holds the call.
            log.warning("sip.reinvite.refused", ["call": party.callID, "status": String(status)])
            return offerHold(entry, now: now)
        case .remoteOfferCompleted, .remoteOfferCancelled, .confirmed:
            // Our 200 was acknowledged, or the far side's offer is done: a hold asked for meanwhile goes now.
            return offerHold(entry, now: now)
        case .info, .sessionRefreshed:
            break
        case .ended(let end):
            log.info("sip.inbound.ended", ["call": party.callID, "sipCallId": entry.call.callID, "end": "\(end)"])
            if let event = Self.report(for: end) { sink.report(event, party) }
        }
        return []
    }

    /// What the engine hears of an inbound call's end; nil when the engine ended it.
    static func report(for end: SIPInboundCall.End) -> SIPCallEvent? {
        switch end {
        case .canceled, .hungUp: .hungUp
        case .rejected, .localHangUp: nil
        case .sessionExpired: .failed(status: 408, reason: "Session expired (RFC 4028)")
        case .unacknowledged: .failed(status: 408, reason: "no ACK for our 2xx")
        case .dialogFailed(let status): .failed(status: status, reason: "the dialog failed")
        case .transportError: .failed(status: 503, reason: "Service Unavailable (a message could not be sent)")
        case .noRoute(let uri): .failed(status: 503, reason: "no route to \(uri)")
        }
    }

    private func schedule(_ entry: Entry, transport: SIPTransportServer, sink: Sink) {
        if entry.counted, entry.call.phase == .ended {
            entry.counted = false
            active.subtract(1, ordering: .relaxed)
        }
        if entry.call.isFinished { return finish(entry, transport: transport) }
        let deadline = entry.call.nextDeadline
        if let timer = entry.timer, timer.at == deadline { return }
        if let timer = entry.timer { _ = transport.loop.cancel(timer.id) }
        entry.timer = nil
        guard let deadline else { return }
        let callID = entry.call.callID
        let id = transport.loop.schedule(at: deadline) { [weak self, weak transport] in
            guard let self, let transport, let entry = self.calls[callID] else { return }
            entry.timer = nil
            self.run(entry.call.handleTimeout(now: transport.loop.now), for: entry, transport: transport, sink: sink)
        }
        entry.timer = (id, deadline)
    }

    private func finish(_ entry: Entry, transport: SIPTransportServer) {
        if entry.counted {
            entry.counted = false
            active.subtract(1, ordering: .relaxed)
        }
        if let timer = entry.timer { _ = transport.loop.cancel(timer.id) }
        entry.timer = nil
        calls[entry.call.callID] = nil
        if byParty[entry.party] == entry.call.callID { byParty[entry.party] = nil }
        filter.forget(callID: entry.call.callID)
    }

    /// The caller as the engine names it: the number a trunk asserts or sends in From
    /// (E.164), else the SIP address it calls from.
    static func callerDestination(of call: SIPInboundCall) -> SIPParty.Destination {
        let identity = call.assertedIdentities.first ?? call.from
        let user = identity.uri.user
        if let user, let number = NumberRoute.e164(user) { return .phone(PhoneRoute(number: number)) }
        let host = identity.uri.host?.description ?? "invalid"
        let address = user.map { "\($0)@\(host)" } ?? host
        if PartyAddress.sip(address).formatProblem == nil { return .uri(address) }
        return .uri("unknown@\(host)")
    }

    /// Where an inbound call's reports and offers go: the user agent's attachments.
    struct Sink: Sendable {
        var report: @Sendable (SIPCallEvent, SIPParty) -> Void
        var offered: @Sendable (InboundSIPCall) -> Void
    }
}
