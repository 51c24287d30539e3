public import ParleyCallCore
import ParleyCallModel
public import ParleyNetCore
import ParleyNetLinux
public import ParleySIP
import ParleySIPCore
public import ParleySIPIO
import Synchronization

/// parleyd's SIP user agent: the adapter behind `SIPCallPort` that places the SIP leg of
/// calls to phone numbers and SIP addresses (the server is a back-to-back user agent:
/// the app's WebRTC leg on one side, this INVITE on the other; docs/sip.md).
///
/// A SIP party's `offered` notification becomes an INVITE (`SIPInvitationPlan` writes it
/// and picks its first hop) run by a `SIPOutboundCall`; `ended` becomes CANCEL before the
/// answer and BYE after. What the far side answers comes back to the engine as
/// `SIPCallEvent`s: 100/181/182 `trying`, 180/183 `ringing` (with early SDP), 2xx
/// `answered`, 3xx-6xx `failed`, BYE `hungUp`; failures without a response are given the
/// status RFC 3261 gives them (a timeout 408, a transport error 503, §8.1.3.1).
///
/// It is the `SIPTransportServer`'s delegate: messages are dispatched to their call by
/// Call-ID; the rest (OPTIONS, INVITEs from outside, strays) is answered as the stateless
/// responder answers it (`SIPStatelessResponder`: 200, 403, 481...).
///
/// Over TLS the first hop's certificate is checked for the name the plan gives it (a
/// route's domain, the trunk's domain, else its address); later requests of the call to
/// that hop reuse the connection, and a new hop is checked for its own host. A request the
/// transport could not send over TLS (a certificate refused, no TLS at the peer) fails its
/// transaction at once, and the call with 503 and the reason.
///
/// Threads: every call lives on the transport's loop (`parley-sip`): its messages, its
/// timers (`nextDeadline`, one timer per call) and the engine's notifications, which hop
/// there; reports go to the engine through the closure it attached, from that loop. Until
/// a transport is attached (`attach(transport:)`, done by `ParleyServer.start`) a call
/// fails at once with 503.
public final class SIPUserAgent: SIPCallPort, SIPTransportDelegate, @unchecked Sendable {
    // @unchecked: `calls` and `byParty` are touched on the transport's loop only; the rest
    // is immutable or in a Mutex.

    private struct Attachments {
        var report: (@Sendable (SIPCallEvent, SIPParty) -> Void)?
        var offered: (@Sendable (InboundSIPCall) -> Void)?
        var transport: SIPTransportServer?
        var plan: SIPInvitationPlan?
    }

    /// One SIP call: its UAC state, the party it is, and its timer on the loop.
    private final class Entry {
        var call: SIPOutboundCall
        let party: SIPParty
        /// The INVITE's first hop and the name its TLS certificate must carry.
        let firstHop: SIPInvitationPlan.FirstHop
        /// Why the transport last failed to send one of its messages, for the call's end.
        var transportFailure: String?
        var timer: (id: TimerID, at: ContinuousClock.Instant)?
        /// Answers re-INVITEs and UPDATEs with offers, once the far side answered.
        var offerAnswer: SIPRemoteOfferAnswer?
        /// Holds and resumes of the app party, for our re-INVITEs.
        var hold = SIPHoldRequests()
        let localSDP: String
        /// Counted in `callCount` until its call ended.
        var counted = true

        init(call: SIPOutboundCall, party: SIPParty, firstHop: SIPInvitationPlan.FirstHop, localSDP: String) {
            self.call = call
            self.party = party
            self.firstHop = firstHop
            self.localSDP = localSDP
        }
    }

    /// The routes, trunk and call settings.
    public let configuration: SIPGatewayConfiguration
    private let log: ServerLog
    private let attachments = Mutex(Attachments())
    private var calls: [String: Entry] = [:]
    private var byParty: [SIPParty: String] = [:]
    private let stateless = SIPStatelessResponder()
    /// Calls not yet ended, read from any thread (metrics and tests).
    private let active = Atomic<Int>(0)
    /// Calls that come in: INVITEs from the trunk to the applications' numbers.
    private let inbound: SIPInboundAgent

    /// - Parameter numbers: the `--sip-number` rules: which application, user or room a
    ///   call in to each number goes to. Without any, INVITEs from outside are refused 403.
    public init(configuration: SIPGatewayConfiguration, numbers: NumberRouteTable = NumberRouteTable(), log: ServerLog) {
        self.configuration = configuration
        self.log = log
        inbound = SIPInboundAgent(configuration: configuration, numbers: numbers, log: log)
    }

    /// SIP calls in progress now: placed and not yet ended. (An ended call's last
    /// transactions stay a little longer, as RFC 3261's timers D and K say, to absorb
    /// retransmissions; they count against `maxCalls` but not here.)
    public var callCount: Int { active.load(ordering: .relaxed) + inbound.active.load(ordering: .relaxed) }

    /// Gives the agent the transport it sends through and receives from (it must be the
    /// transport's delegate) and the host it names itself by: the configured advertised
    /// host, else the transport's address. Its TLS port, when it listens for TLS, is the
    /// one the Via and Contact of calls over TLS name. Throws when that address is a wildcard and no
    /// host is configured: the far side could not send its responses anywhere.
    public func attach(transport: SIPTransportServer) throws(SIPGatewayConfigurationError) {
        let local = transport.localAddress
        let hostText: String
        if let advertised = configuration.advertisedHost {
            hostText = advertised
        } else {
            guard !local.hostBytes.allSatisfy({ $0 == 0 }) else {
                throw SIPGatewayConfigurationError(
                    "SIP listens on the wildcard \(local): set the advertised SIP host (--sip-advertised-host)")
            }
            hostText = local.family == .ipv4 ? local.hostDescription : "[\(local.hostDescription)]"
        }
        let host: SIPHost
        do { host = try SIPHost(parsing: hostText) } catch {
            throw SIPGatewayConfigurationError("the advertised SIP host \(hostText) is not a host: \(error.description)")
        }
        let plan = SIPInvitationPlan(configuration: configuration, localHost: host, localPort: local.port,
                                     localTLSPort: transport.tlsLocalAddress?.port)
        attachments.withLock {
            $0.transport = transport
            $0.plan = plan
        }
    }

    // MARK: SIPCallPort

    public func attach(_ report: @escaping @Sendable (SIPCallEvent, SIPParty) -> Void) {
        attachments.withLock { $0.report = report }
    }

    public func attachInbound(_ offered: @escaping @Sendable (InboundSIPCall) -> Void) {
        attachments.withLock { $0.offered = offered }
    }

    /// Where the inbound half's reports and offers go.
    private var inboundSink: SIPInboundAgent.Sink {
        SIPInboundAgent.Sink(
            report: { [weak self] event, party in self?.report(event, party) },
            offered: { [weak self] call in self?.attachments.withLock { $0.offered }?(call) })
    }

    public func tell(_ party: SIPParty, _ notification: CallNotification) {
        let (transport, plan) = attachments.withLock { ($0.transport, $0.plan) }
        guard let transport, let plan else {
            if case .offered = notification {
                report(.failed(status: 503, reason: "parleyd does not listen for SIP"), party)
            }
            return
        }
        let accepted = transport.loop.execute { [self] in
            if inbound.handles(party) {
                inbound.tell(party, notification, transport: transport, sink: inboundSink)
                return
            }
            switch notification {
            case .offered(let offer): place(party, offer: offer, plan: plan, transport: transport)
            case .ended: end(party, transport: transport)
            case .held(_, let held, _, _): hold(party, held: held, transport: transport)
            case .mediaReady, .progress, .ringing, .earlyMedia, .answered, .established, .dtmf, .talking: break
            }
        }
        if !accepted, case .offered = notification {
            report(.failed(status: 503, reason: "parleyd's SIP transport is shut down"), party)
        }
    }

    // MARK: SIPTransportDelegate (the transport's loop)

    public func transport(_ transport: SIPTransportServer, received message: SIPMessage, from source: SIPMessageSource) -> SIPDelivery {
        let hop = SIPHop(transport: Self.hopTransport(source.transport), host: Self.host(of: source.remoteAddress),
                         port: source.remoteAddress.port)
        guard let callID = try? message.callID(), let entry = calls[callID] else {
            if let plan = attachments.withLock({ $0.plan }), let local = plan.inboundLocal(over: hop.transport),
               let delivery = inbound.receive(message, from: source, hop: hop, local: local, transport: transport, sink: inboundSink) {
                return delivery
            }
            return stateless.transport(transport, received: message, from: source)
        }
        let now = transport.loop.now
        run(entry.call.receive(message, from: hop, now: now), for: entry, transport: transport)
        return .taken
    }

    public func transport(_ transport: SIPTransportServer, couldNotSend message: SIPMessage, to destination: SocketAddress,
                          reason: String) {
        guard let callID = try? message.callID(), let entry = calls[callID] else {
            if inbound.couldNotSend(message, transport: transport, sink: inboundSink) {
                log.warning("sip.send.failed", ["to": destination.description, "reason": reason])
            }
            return
        }
        log.warning("sip.send.failed", ["call": entry.party.callID, "to": destination.description, "reason": reason])
        entry.transportFailure = reason
        run(entry.call.transportFailed(sending: message, now: transport.loop.now), for: entry, transport: transport)
    }

    // MARK: Calls (the transport's loop)

    private func place(_ party: SIPParty, offer: CallOffer, plan: SIPInvitationPlan, transport: SIPTransportServer) {
        guard byParty[party] == nil else { return }
        guard calls.count < configuration.maxCalls else {
            refuse(party, status: 503, reason: "parleyd holds \(calls.count) SIP calls, its limit")
            return
        }
        let invitation: SIPOutboundCall.Invitation, firstHop: SIPInvitationPlan.FirstHop
        do {
            invitation = try plan.invitation(for: party, offer: offer)
            firstHop = try plan.firstHop(for: party)
        } catch {
            refuse(party, status: error.status, reason: error.reason)
            return
        }
        let call: SIPOutboundCall
        do {
            call = try SIPOutboundCall(invitation: invitation, configuration: configuration.call,
                                       resolver: SIPLiteralHopResolver(routes: configuration.routes),
                                       random: SystemRandomNumberGenerator())
        } catch {
            refuse(party, status: 500, reason: "the INVITE cannot be written: \(error)")
            return
        }
        let entry = Entry(call: call, party: party, firstHop: firstHop, localSDP: offer.sdp)
        calls[call.callID] = entry
        byParty[party] = call.callID
        active.add(1, ordering: .relaxed)
        report(.placed(sipCallID: call.callID), party)
        log.info("sip.invite", ["call": party.callID, "sipCallId": call.callID, "to": invitation.requestURI.description,
                                "via": invitation.destination.description])
        run(entry.call.start(now: transport.loop.now), for: entry, transport: transport)
    }

    private func end(_ party: SIPParty, transport: SIPTransportServer) {
        guard let callID = byParty[party], let entry = calls[callID] else { return }
        let now = transport.loop.now
        let output = entry.call.phase == .answered ? entry.call.hangUp(now: now) : entry.call.cancel(now: now)
        run(output, for: entry, transport: transport)
    }

    /// The app party held or resumed the call: our re-INVITE tells the far side.
    private func hold(_ party: SIPParty, held: Bool, transport: SIPTransportServer) {
        guard let callID = byParty[party], let entry = calls[callID] else { return }
        entry.hold.want(held)
        run(offerHold(entry, now: transport.loop.now), for: entry, transport: transport)
    }

    /// Sends the re-INVITE the wanted hold needs (RFC 3264 §8.4), unless an offer is open:
    /// it then goes once that one is answered.
    private func offerHold(_ entry: Entry, now: ContinuousClock.Instant) -> [SIPOutboundCall.Output] {
        guard let current = entry.offerAnswer?.localHold, let held = entry.hold.next(current: current),
              let sdp = entry.offerAnswer?.holdOffer(held) else { return [] }
        do {
            let out = try entry.call.offer(sdp: sdp, now: now)
            entry.hold.sent(held)
            log.info("sip.reinvite", ["call": entry.party.callID, "hold": String(held)])
            return out
        } catch {
            entry.offerAnswer?.offerRefused()
            if error.kind != .offerPending {
                entry.hold.abandon()
                log.warning("sip.reinvite.failed", ["call": entry.party.callID, "hold": String(held), "reason": error.description])
            }
            return []
        }
    }

    private func refuse(_ party: SIPParty, status: Int, reason: String) {
        log.warning("sip.refused", ["call": party.callID, "to": party.description, "status": String(status), "reason": reason])
        report(.failed(status: status, reason: reason), party)
    }

    /// Carries out a call's outputs, then re-arms its timer or forgets it once finished.
    private func run(_ outputs: [SIPOutboundCall.Output], for entry: Entry, transport: SIPTransportServer) {
        var pending = outputs
        while !pending.isEmpty {
            let output = pending.removeFirst()
            switch output {
            case .send(let message, let hop):
                if let address = SocketAddress(hostBytes: hop.host.addressBytes ?? [], port: hop.port) {
                    // The INVITE's hop keeps its name; another hop (a Contact elsewhere)
                    // is checked for the host it is written with.
                    let tlsName = hop.isSameAddress(as: entry.firstHop.hop) ? entry.firstHop.tlsName : hop.host.text
                    transport.send(message, to: address, transport: Self.transport(hop.transport),
                                   serverName: hop.transport == .tls ? tlsName : nil)
                } else {
                    log.warning("sip.send.unroutable", ["call": entry.party.callID, "hop": hop.description])
                    pending.append(contentsOf: entry.call.transportFailed(sending: message, now: transport.loop.now))
                }
            case .event(let event):
                pending.append(contentsOf: handle(event, of: entry, transport: transport))
            }
        }
        schedule(entry, transport: transport)
    }

    /// Reports an event to the engine; returns what answering it sends.
    private func handle(_ event: SIPOutboundCall.Event, of entry: Entry, transport: SIPTransportServer) -> [SIPOutboundCall.Output] {
        let party = entry.party
        switch event {
        case .provisional(let status, _, let sdp, let headers):
            if status == 180 || status == 183 || sdp != nil {
                report(.ringing(earlySDP: sdp.map { String(decoding: $0, as: UTF8.self) }, headers: Self.appHeaders(headers)), party)
            } else {
                report(.trying, party)
            }
        case .answered(let sdp, let headers):
            let answer = sdp.map { String(decoding: $0, as: UTF8.self) }
            entry.offerAnswer = SIPRemoteOfferAnswer(localSDP: entry.localSDP, remoteAnswer: answer)
            log.info("sip.answered", ["call": party.callID, "sipCallId": entry.call.callID])
            report(.answered(sdp: answer, headers: Self.appHeaders(headers)), party)
        case .remoteOffer(let method, let sdp):
            let now = transport.loop.now
            guard let sdp else {
                // A re-INVITE without an offer wants ours: our last SDP.
                let ours = entry.offerAnswer.map { $0.localSDP.serializedBytes() } ?? Array(entry.localSDP.utf8)
                return (try? entry.call.answerRemoteOffer(sdp: ours, now: now)) ?? []
            }
            let heldBefore = entry.offerAnswer?.remoteHolds ?? false
            if let answer = entry.offerAnswer?.answer(to: sdp) {
                log.info("sip.reoffer.answered", ["call": party.callID, "method": method.token])
                if let held = entry.offerAnswer?.remoteHolds, held != heldBefore { report(.held(held), party) }
                return (try? entry.call.answerRemoteOffer(sdp: answer, now: now)) ?? []
            }
            log.warning("sip.reoffer.refused", ["call": party.callID, "method": method.token, "status": "488"])
            return (try? entry.call.rejectRemoteOffer(statusCode: 488, now: now)) ?? []
        case .localOfferAnswered:
            entry.hold.answered()
            entry.offerAnswer?.offerAnswered()
            log.info("sip.reinvite.answered", ["call": party.callID])
            return offerHold(entry, now: transport.loop.now)
        case .localOfferRefused(let status):
            entry.hold.refused()
            entry.offerAnswer?.offerRefused()
            // The old session goes on (RFC 3261 §14.1); the server's media still holds the call.
            log.warning("sip.reinvite.refused", ["call": party.callID, "status": String(status)])
            return offerHold(entry, now: transport.loop.now)
        case .remoteOfferCompleted, .remoteOfferCancelled:
            return offerHold(entry, now: transport.loop.now)
        case .sessionRefreshed:
            break
        case .info(let contentType, let body):
            if let digits = SIPDTMFInfo.key(contentType: contentType, body: body) {
                log.info("sip.info.dtmf", ["call": party.callID, "digits": digits])
                report(.dtmf(digits: digits), party)
            }
        case .ended(let end):
            log.info("sip.ended", ["call": party.callID, "sipCallId": entry.call.callID, "end": "\(end)"])
            if case .transportError = end, let failure = entry.transportFailure {
                report(.failed(status: 503, reason: "Service Unavailable (\(failure))"), party)
            } else if let event = Self.report(for: end) {
                report(event, party)
            }
        }
        return []
    }

    /// What the engine hears of a call's end; nil when the engine ended it (cancel, BYE).
    static func report(for end: SIPOutboundCall.End) -> SIPCallEvent? {
        switch end {
        case .rejected(let status, let reason, _): .failed(status: status, reason: reason)
        case .cancelled, .localHangUp: nil
        case .timedOut: .failed(status: 408, reason: "Request Timeout (no final response)")
        case .remoteHangUp: .hungUp
        case .sessionExpired: .failed(status: 408, reason: "Session expired (RFC 4028)")
        case .dialogFailed(let status): .failed(status: status, reason: "the dialog failed")
        case .unacknowledged: .failed(status: 408, reason: "no ACK for our 2xx")
        case .transportError: .failed(status: 503, reason: "Service Unavailable (the request could not be sent)")
        case .noRoute(let uri): .failed(status: 503, reason: "no route to \(uri)")
        case .protocolError(let text): .failed(status: 502, reason: "Bad Gateway (\(text))")
        }
    }

    /// The far side's `x-` headers as the app may receive them (docs/protocol.md, "Custom
    /// headers"): names of `A-Z a-z 0-9 - _ .` up to 64 bytes, values without control
    /// characters, at most 64 headers and 1024 bytes of names and values; the first of a
    /// repeated name wins. What does not fit is left out, never sent half.
    static func appHeaders(_ fields: [SIPHeaders.Field]) -> [String: String] {
        var headers: [String: String] = [:]
        var bytes = 0
        for field in fields where field.name.utf8.count <= 64 && headers[field.name] == nil {
            let nameFits = field.name.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2D || byte == 0x5F || byte == 0x2E
            }
            let value = String(String.UnicodeScalarView(field.value.unicodeScalars.map {
                $0.properties.generalCategory == .control ? " " : $0
            }))
            let size = field.name.utf8.count + value.utf8.count
            guard nameFits, headers.count < 64, bytes + size <= 1024 else { continue }
            headers[field.name] = value
            bytes += size
        }
        return headers
    }

    /// Keeps one timer per call at its next deadline; forgets a finished call.
    private func schedule(_ entry: Entry, transport: SIPTransportServer) {
        if entry.counted, entry.call.phase == .ended {
            entry.counted = false
            active.subtract(1, ordering: .relaxed)
        }
        if entry.call.isFinished {
            if let timer = entry.timer { _ = transport.loop.cancel(timer.id) }
            entry.timer = nil
            calls[entry.call.callID] = nil
            if byParty[entry.party] == entry.call.callID { byParty[entry.party] = nil }
            return
        }
        let deadline = entry.call.nextDeadline
        if let timer = entry.timer, timer.at == deadline { return }
        if let timer = entry.timer { _ = transport.loop.cancel(timer.id) }
        entry.timer = nil
        guard let deadline else { return }
        let callID = entry.call.callID
        let id = transport.loop.schedule(at: deadline) { [weak self, weak transport] in
            guard let self, let transport, let entry = self.calls[callID] else { return }
            entry.timer = nil
            self.run(entry.call.handleTimeout(now: transport.loop.now), for: entry, transport: transport)
        }
        entry.timer = (id, deadline)
    }

    private func report(_ event: SIPCallEvent, _ party: SIPParty) {
        attachments.withLock { $0.report }?(event, party)
    }

    static func transport(_ transport: SIPHop.Transport) -> SIPTransport {
        switch transport {
        case .udp: .udp
        case .tcp: .tcp
        case .tls: .tls
        }
    }

    static func hopTransport(_ transport: SIPTransport) -> SIPHop.Transport {
        switch transport {
        case .udp: .udp
        case .tcp: .tcp
        case .tls: .tls
        }
    }

    private static func host(of address: SocketAddress) -> SIPHost {
        address.family == .ipv4 ? .ipv4(address.hostDescription) : .ipv6(address.hostDescription)
    }
}

/// The SIP gateway's configuration cannot work (a wildcard address and no advertised host).
public struct SIPGatewayConfigurationError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
