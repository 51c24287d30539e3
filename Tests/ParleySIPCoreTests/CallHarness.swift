import Testing
import ParleySIP
import ParleySIPCore
import ParleyTestSupport

/// An SDP with the given direction (enough for the call, which never reads SDP).
func sdp(_ direction: String, version: Int = 1, port: Int = 40_000) -> [UInt8] {
    Array("""
    v=0\r
    o=- 42 \(version) IN IP4 198.51.100.20\r
    s=-\r
    c=IN IP4 198.51.100.20\r
    t=0 0\r
    m=audio \(port) RTP/AVP 0 101\r
    a=rtpmap:101 telephone-event/8000\r
    a=\(direction)\r

    """.utf8)
}

func text(_ bytes: [UInt8]?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

/// One `SIPOutboundCall` on virtual time with a far side written by hand: the trunk's
/// proxy at 198.51.100.5 takes the INVITE, the gateway at 198.51.100.20:5070 answers.
struct CallHarness {
    static let proxy = SIPHop(transport: .udp, host: .ipv4("198.51.100.5"), port: 5060)
    static let gateway = SIPHop(transport: .udp, host: .ipv4("198.51.100.20"), port: 5070)
    static let gatewayContact = "<sip:gw@198.51.100.20:5070>"
    static let offer = Array("v=0\r\no=parley 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 30000 RTP/AVP 0 101\r\na=sendrecv\r\n".utf8)

    var call: SIPOutboundCall
    /// Milliseconds after `VirtualTime.t0`.
    var now = 0
    /// Everything the call sent, with the hop and the time.
    var sent: [(at: Int, message: SIPMessage, hop: SIPHop)] = []
    /// Every event, with the time.
    var events: [(at: Int, event: SIPOutboundCall.Event)] = []
    /// The far side's dialog, once it answered.
    var far: SIPDialog?
    var farBranch = 0

    static func invitation(credentials: SIPDigestClient? = nil, headers: SIPHeaders = SIPHeaders()) -> SIPOutboundCall.Invitation {
        SIPOutboundCall.Invitation(
            requestURI: Messages.uri("sip:+4615550101@trunk.example.test;user=phone"),
            from: Messages.address("\"Parley\" <sip:+4615550100@parley.example.test>"),
            to: Messages.address("<sip:+4615550101@trunk.example.test>"),
            contact: Messages.address("<sip:parley@192.0.2.1:5060>"),
            offer: offer, destination: proxy, viaHost: Hops.local, viaPort: 5060, headers: headers,
            callID: "call-1@192.0.2.1", credentials: credentials)
    }

    init(invitation: SIPOutboundCall.Invitation = Self.invitation(), configuration: SIPOutboundCall.Configuration = .init()) throws {
        call = try SIPOutboundCall(invitation: invitation, configuration: configuration, random: SeededGenerator(seed: 42))
    }

    // MARK: Driving

    mutating func take(_ outputs: [SIPOutboundCall.Output]) {
        for output in outputs {
            switch output {
            case .send(let message, let hop): sent.append((now, message, hop))
            case .event(let event): events.append((now, event))
            }
        }
    }

    mutating func start() { take(call.start(now: VirtualTime.at(now))) }

    mutating func receive(_ message: SIPMessage, from hop: SIPHop = CallHarness.proxy) {
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

    mutating func cancel() { take(call.cancel(now: VirtualTime.at(now))) }
    mutating func hangUp() { take(call.hangUp(now: VirtualTime.at(now))) }

    mutating func answer(_ sdp: [UInt8]) throws {
        take(try call.answerRemoteOffer(sdp: sdp, now: VirtualTime.at(now)))
    }

    mutating func reject(_ code: Int) throws {
        take(try call.rejectRemoteOffer(statusCode: code, now: VirtualTime.at(now)))
    }

    // MARK: Reading

    /// The messages sent since `index`.
    func sent(since index: Int) -> [(at: Int, message: SIPMessage, hop: SIPHop)] { Array(sent[index...]) }

    /// The requests sent of `method`.
    func requests(_ method: SIPMethod) -> [(at: Int, message: SIPMessage, hop: SIPHop)] {
        sent.filter { $0.message.method == method }
    }

    /// The responses sent with `code`.
    func responses(_ code: Int) -> [(at: Int, message: SIPMessage, hop: SIPHop)] {
        sent.filter { $0.message.statusCode == code }
    }

    var lastInvite: SIPMessage { requests(.invite).last!.message }

    var ends: [SIPOutboundCall.End] {
        events.compactMap { if case .ended(let end) = $0.event { end } else { nil } }
    }

    // MARK: The far side

    /// A response of the far side to `request` (our latest INVITE by default).
    func response(_ code: Int, to request: SIPMessage? = nil, tag: String = "gw1", body: [UInt8] = [],
                  contact: String? = CallHarness.gatewayContact, headers: [(String, String)] = []) -> SIPMessage {
        var response = try! (request ?? lastInvite).makeResponse(statusCode: code, toTag: code == 100 ? nil : tag)
        for (name, value) in headers { try! response.headers.add(name: name, value: value) }
        if let contact, code > 100 { try! response.headers.add(name: "Contact", value: contact) }
        if !body.isEmpty {
            try! response.headers.add(name: "Content-Type", value: "application/sdp")
            response.body = body
        }
        return response
    }

    /// Answers our INVITE 200 and keeps the far side's dialog.
    mutating func answerCall(body: [UInt8] = sdp("sendrecv"), headers: [(String, String)] = [], from hop: SIPHop = CallHarness.proxy) {
        let ok = response(200, body: body, headers: headers)
        far = try! SIPDialog(uasRequest: lastInvite, response: ok)
        receive(ok, from: hop)
    }

    /// A request of the far side in the dialog, from the gateway.
    mutating func farRequest(_ method: SIPMethod, body: [UInt8] = [], headers: [(String, String)] = []) -> SIPMessage {
        farBranch += 1
        let via = try! SIPVia(transport: "UDP", host: CallHarness.gateway.host, port: CallHarness.gateway.port,
                              branch: "z9hG4bKfar\(farBranch)")
        var extra = SIPHeaders()
        for (name, value) in headers { try! extra.add(name: name, value: value) }
        return try! far!.makeRequest(method, via: via, headers: extra, contentType: body.isEmpty ? nil : .sdp, body: body)
    }

    /// The far side's ACK for our 2xx to its `invite`.
    func farAck(for invite: SIPMessage, body: [UInt8] = []) -> SIPMessage {
        let via = try! SIPVia(transport: "UDP", host: CallHarness.gateway.host, port: CallHarness.gateway.port, branch: "z9hG4bKfarack")
        return try! far!.makeAck(inviteSequence: try! invite.cseq()!.sequence, via: via, contentType: body.isEmpty ? nil : .sdp, body: body)
    }
}
