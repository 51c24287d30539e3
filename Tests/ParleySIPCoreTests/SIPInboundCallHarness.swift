import Testing
import ParleySDP
import ParleySIP
import ParleySIPCore
import ParleyTestSupport

/// One `SIPInboundCall` on virtual time with a caller written by hand: a trunk's proxy at
/// 198.51.100.5 (which record-routes) brings the INVITE of a caller whose Contact is
/// 198.51.100.30:5080; the caller's later requests come straight from there.
struct InboundHarness {
    static let proxy = SIPHop(transport: .udp, host: .ipv4("198.51.100.5"), port: 5060)
    static let caller = SIPHop(transport: .udp, host: .ipv4("198.51.100.30"), port: 5080)
    static let callerContact = "<sip:caller@198.51.100.30:5080>"
    static let local = SIPInboundCall.Local(contact: Messages.address("<sip:parley@192.0.2.1:5060>"), viaHost: Hops.local, viaPort: 5060)

    var call: SIPInboundCall
    /// The INVITE as the proxy sent it.
    let invite: SIPMessage
    /// Milliseconds after `VirtualTime.t0`.
    var now = 0
    var sent: [(at: Int, message: SIPMessage, hop: SIPHop)] = []
    var events: [(at: Int, event: SIPInboundCall.Event)] = []
    /// The caller's dialog, once we answered.
    var far: SIPDialog?
    var farBranch = 0

    /// The INVITE of the tests: an offer (unless `offer` is nil), a P-Asserted-Identity,
    /// two `x-` headers, Record-Route of the proxy, and `headers` after them.
    static func makeInvite(offer: [UInt8]? = sdp("sendrecv"), headers: [(String, String)] = [],
                           branch: String = "z9hG4bKinv1", cseq: UInt32 = 1) -> SIPMessage {
        let via = try! SIPVia(transport: "UDP", host: proxy.host, port: proxy.port, branch: branch)
        var invite = try! SIPMessage.request(
            method: .invite, uri: Messages.uri("sip:+4615550199@192.0.2.1:5060;user=phone"), via: via,
            from: Messages.address("\"Alice\" <sip:+4615550101@trunk.example.test>", tag: "caller1"),
            to: Messages.address("<sip:+4615550199@parley.example.test>"), callID: "in-1@198.51.100.5", cseq: cseq,
            contact: Messages.address(callerContact), contentType: offer == nil ? nil : .sdp, body: offer ?? [])
        try! invite.headers.add(name: "Record-Route", value: "<sip:198.51.100.5;lr>")
        try! invite.headers.add(name: "P-Asserted-Identity", value: "<sip:+4615550101@trunk.example.test;user=phone>")
        try! invite.headers.add(name: "X-Customer", value: "42")
        try! invite.headers.add(name: "x-campaign", value: "spring")
        try! invite.headers.add(name: "Allow", value: "INVITE, ACK, CANCEL, BYE, OPTIONS, UPDATE, INFO")
        for (name, value) in headers { try! invite.headers.add(name: name, value: value) }
        return invite
    }

    init(invite: SIPMessage = Self.makeInvite(), configuration: SIPInboundCall.Configuration = .init()) throws {
        self.invite = invite
        call = try SIPInboundCall(invite: invite, from: Self.proxy, local: Self.local, configuration: configuration,
                                  random: SeededGenerator(seed: 42))
    }

    // MARK: Driving

    mutating func take(_ outputs: [SIPInboundCall.Output]) {
        for output in outputs {
            switch output {
            case .send(let message, let hop): sent.append((now, message, hop))
            case .event(let event): events.append((now, event))
            }
        }
    }

    mutating func start() throws { take(try call.start(now: VirtualTime.at(now))) }

    mutating func receive(_ message: SIPMessage, from hop: SIPHop = InboundHarness.caller) {
        take(call.receive(message, from: hop, now: VirtualTime.at(now)))
    }

    /// Moves time to `milliseconds`, firing every deadline on the way at its instant.
    mutating func advance(to milliseconds: Int) {
        while let deadline = VirtualTime.ms(call.nextDeadline), deadline <= milliseconds {
            now = max(now, deadline)
            take(call.handleTimeout(now: VirtualTime.at(now)))
        }
        now = max(now, milliseconds)
    }

    mutating func ring(_ earlySDP: [UInt8]? = nil) throws { take(try call.ring(earlySDP: earlySDP, now: VirtualTime.at(now))) }
    mutating func reject(_ code: Int, _ phrase: String? = nil) throws {
        take(try call.reject(statusCode: code, reasonPhrase: phrase, now: VirtualTime.at(now)))
    }
    mutating func hangUp() { take(call.hangUp(now: VirtualTime.at(now))) }

    /// Answers with `sdp` and keeps the caller's side of the dialog.
    mutating func answer(_ sdp: [UInt8] = InboundHarness.answerSDP) throws {
        take(try call.answer(sdp: sdp, now: VirtualTime.at(now)))
        let ok = try #require(responses(200).last?.message)
        far = try SIPDialog(uacRequest: invite, response: ok)
    }

    mutating func answerOffer(_ sdp: [UInt8]) throws { take(try call.answerRemoteOffer(sdp: sdp, now: VirtualTime.at(now))) }
    mutating func rejectOffer(_ code: Int = 488) throws { take(try call.rejectRemoteOffer(statusCode: code, now: VirtualTime.at(now))) }

    /// Started, answered and acknowledged at t = 0.
    static func confirmed(invite: SIPMessage = makeInvite(), configuration: SIPInboundCall.Configuration = .init()) throws -> InboundHarness {
        var harness = try InboundHarness(invite: invite, configuration: configuration)
        try harness.start()
        try harness.answer()
        harness.receive(harness.ack())
        #expect(harness.call.phase == .confirmed)
        return harness
    }

    static let answerSDP = Array("v=0\r\no=parley 7 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 30000 RTP/AVP 0 101\r\na=sendrecv\r\n".utf8)

    // MARK: Reading

    func requests(_ method: SIPMethod) -> [(at: Int, message: SIPMessage, hop: SIPHop)] {
        sent.filter { $0.message.method == method }
    }

    func responses(_ code: Int) -> [(at: Int, message: SIPMessage, hop: SIPHop)] {
        sent.filter { $0.message.statusCode == code }
    }

    var ends: [SIPInboundCall.End] {
        events.compactMap { if case .ended(let end) = $0.event { end } else { nil } }
    }

    // MARK: The caller

    /// The caller's ACK for our 2xx to `invite` (the initial INVITE by default).
    mutating func ack(for request: SIPMessage? = nil, body: [UInt8] = []) -> SIPMessage {
        farBranch += 1
        let via = try! SIPVia(transport: "UDP", host: Self.caller.host, port: Self.caller.port, branch: "z9hG4bKack\(farBranch)")
        let sequence = try! (request ?? invite).cseq()!.sequence
        return try! far!.makeAck(inviteSequence: sequence, via: via, contentType: body.isEmpty ? nil : .sdp, body: body)
    }

    /// A request of the caller in the dialog.
    mutating func farRequest(_ method: SIPMethod, body: [UInt8] = [], contentType: SIPContentType? = nil,
                             headers: [(String, String)] = []) -> SIPMessage {
        farBranch += 1
        let via = try! SIPVia(transport: "UDP", host: Self.caller.host, port: Self.caller.port, branch: "z9hG4bKfar\(farBranch)")
        var extra = SIPHeaders()
        for (name, value) in headers { try! extra.add(name: name, value: value) }
        return try! far!.makeRequest(method, via: via, headers: extra,
                                     contentType: contentType ?? (body.isEmpty ? nil : .sdp), body: body)
    }

    /// The CANCEL of the initial INVITE (§9.1): its Request-URI, top Via, From, To, Call-ID
    /// and CSeq number.
    func cancel() -> SIPMessage {
        try! SIPMessage.request(method: .cancel, uri: invite.requestURI!, via: try! invite.topVia()!, from: try! invite.from()!,
                                to: try! invite.to()!, callID: try! invite.callID()!, cseq: 1)
    }

    /// The caller's response to a request of ours.
    func farResponse(_ code: Int, to request: SIPMessage, headers: [(String, String)] = []) -> SIPMessage {
        var response = try! request.makeResponse(statusCode: code)
        for (name, value) in headers { try! response.headers.add(name: name, value: value) }
        return response
    }
}

/// What an owner answers to an offer (as parleyd's gateway leg does): our SDP with the
/// direction RFC 3264 §6.1 gives for wanting sendrecv (sendonly → recvonly, inactive →
/// inactive), or nil (488) when the offer drops PCMU, the codec the call runs.
func mirroredAnswer(to offer: [UInt8]?, version: Int) throws -> [UInt8]? {
    let session = try SessionDescription(parsing: try #require(offer))
    let audio = try #require(session.media.first { $0.media == "audio" })
    guard audio.formats.contains("0") else { return nil }
    return sdp(audio.direction(in: session).answer(wanting: .sendrecv).rawValue, version: version, port: 30_000)
}

/// An SDP offering only G.729 (payload 18): a codec change the call cannot make.
func g729Offer(version: Int) -> [UInt8] {
    Array("v=0\r\no=- 42 \(version) IN IP4 198.51.100.30\r\ns=-\r\nc=IN IP4 198.51.100.30\r\nt=0 0\r\nm=audio 40000 RTP/AVP 18\r\na=sendrecv\r\n".utf8)
}
