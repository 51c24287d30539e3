import ParleyNetCore
import ParleySDP
import ParleySIP

/// The `conference` group's SIP user agent client toward parleyd, without I/O: the
/// messages that put a load participant into a room through a number's rule
/// (`--sip-number NUMBER=KEY:conference:ROOM`) and take it out again, and what the answers
/// to them mean. `ParleydConferenceRoom` sends and receives them on one UDP socket.
///
/// Each participant is one dialog (RFC 3261 §12): an INVITE whose SDP offers plain RTP
/// (RTP/AVP, no SRTP, no ICE) at the participant's own load socket, and Opus alone, so
/// parleyd's leg sends the mix back there in Opus (a plain-RTP leg answers the common
/// codecs in its own order, G.711 first for trunks toward the PSTN: an offer that also
/// listed PCMU would get PCMU); the ACK of its 200; a BYE at the end.
struct ConferenceSIPCaller {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// What the 200's SDP answer says: where parleyd receives this participant's RTP, and
    /// the codec it chose.
    struct MediaAnswer: Equatable {
        let address: SocketAddress
        let payloadType: UInt8
        let encodingName: String
    }

    /// One participant's dialog, from the INVITE to the BYE.
    struct Call {
        let step: Int
        let participant: Int
        let callID: String
        let fromTag: String
        /// The INVITE as sent (resent unchanged while nothing answers it).
        let invite: SIPMessage
        /// Set by the 200: the server's tag and Contact (where in-dialog requests go).
        var toTag: String?
        var remoteTarget: SIPURI?
        var answer: MediaAnswer?
    }

    /// How a response to one of our requests moves its call.
    enum ResponseOutcome: Equatable {
        /// 1xx to the INVITE: wait on.
        case provisional
        /// A 2xx to the INVITE: ACK it (every copy; parleyd resends its 200 until the ACK).
        case answered(MediaAnswer)
        /// A final failure to the INVITE (an ACK for it goes with the same branch).
        case refused(status: Int, reason: String)
        /// The final answer to our BYE.
        case byeAnswered(status: Int)
        /// Not ours, or not one this caller tracks (a response to a request it never sent).
        case unrelated
    }

    /// Our SIP socket (the trunk parleyd takes INVITEs from).
    let local: SocketAddress
    /// parleyd's SIP address.
    let server: SocketAddress
    /// The number whose rule names the room (`--sip-number`).
    let number: String
    /// Makes this run's Call-IDs, tags and branches distinct from another run's.
    let runID: String
    /// The Opus payload type of the offer (the load's, 111).
    let opusPayloadType: UInt8

    /// A SIP message the bench accepts from parleyd: a datagram of at most this size.
    static let maximumDatagram = 16 * 1024

    /// One datagram from parleyd as a SIP message (at most `maximumDatagram` bytes; the
    /// parser's own limits apply within it).
    static func message(_ datagram: some Collection<UInt8>) throws -> SIPMessage {
        guard datagram.count <= maximumDatagram else { throw Failure(description: "a SIP datagram of \(datagram.count) bytes") }
        return try SIPMessage(datagram: datagram)
    }

    /// `sip:NUMBER@server`, where the INVITE goes.
    func requestURI() throws -> SIPURI {
        try SIPURI(user: number, host: SIPHost(parsing: server.hostDescription), port: server.port)
    }

    /// The INVITE for participant `participant` of step `step`, offering its RTP at `media`.
    func invite(participant: Int, step: Int, media: SocketAddress) throws -> Call {
        let callID = "\(runID)-\(step)-\(participant)"
        let fromTag = "p\(step)x\(participant)"
        let localHost = try SIPHost(parsing: local.hostDescription)
        let via = try SIPVia(transport: "UDP", host: localHost, port: local.port, branch: branch("i", step, participant),
                             parameters: [SIPParameter(name: "rport")])
        // A caller number per participant, as phones calling in would have.
        let caller = "+46155\(String(100_000 + participant).suffix(5))"
        let from = try SIPNameAddress(uri: SIPURI(user: caller, host: localHost), parameters: [SIPParameter(name: "tag", value: fromTag)])
        let to = try SIPNameAddress(uri: requestURI())
        let contact = try SIPNameAddress(uri: SIPURI(user: caller, host: localHost, port: local.port))
        let body = Array(Self.offer(media: media, opusPayloadType: opusPayloadType, sessionID: UInt64(step) << 16 | UInt64(participant)).utf8)
        var invite = try SIPMessage.request(method: .invite, uri: requestURI(), via: via, from: from, to: to, callID: callID, cseq: 1,
                                            contact: contact, contentType: .sdp, body: body)
        try invite.headers.add(name: "Allow", value: "INVITE, ACK, BYE, CANCEL, OPTIONS")
        return Call(step: step, participant: participant, callID: callID, fromTag: fromTag, invite: invite)
    }

    /// The SDP offer (RFC 8866, RFC 3264 §5): one audio stream, plain RTP at `media`, Opus
    /// only (RFC 7587: `opus/48000/2`, no in-band FEC, as the load sends it).
    static func offer(media: SocketAddress, opusPayloadType: UInt8, sessionID: UInt64) -> String {
        let ip = media.hostBytes.count == 16 ? "IP6" : "IP4"
        return [
            "v=0",
            "o=- \(sessionID) 1 IN \(ip) \(media.hostDescription)",
            "s=-",
            "c=IN \(ip) \(media.hostDescription)",
            "t=0 0",
            "m=audio \(media.port) RTP/AVP \(opusPayloadType)",
            "a=rtpmap:\(opusPayloadType) opus/48000/2",
            "a=fmtp:\(opusPayloadType) useinbandfec=0",
            "a=ptime:20",
            "a=sendrecv",
        ].map { $0 + "\r\n" }.joined()
    }

    /// The media answer in a 200's SDP body: its one audio stream's address (the stream's
    /// `c=` line, else the session's) and port, and its first payload type with the name
    /// its rtpmap gives (or RFC 3551's static name for 0 and 8).
    static func mediaAnswer(sdp: [UInt8]) throws -> MediaAnswer {
        let session: SessionDescription
        do { session = try SessionDescription(parsing: sdp) } catch {
            throw Failure(description: "the 200's SDP does not parse: \(error)")
        }
        guard let audio = session.media.first(where: { $0.media == "audio" }) else {
            throw Failure(description: "the 200's SDP has no audio stream")
        }
        guard audio.port != 0 else { throw Failure(description: "the 200's SDP refuses the audio stream (port 0)") }
        guard let connection = audio.connections.first ?? session.connection,
              let address = SocketAddress(host: connection.address, port: audio.port) else {
            throw Failure(description: "the 200's SDP has no usable connection address")
        }
        guard let payloadType = audio.payloadTypes.first else { throw Failure(description: "the 200's SDP audio stream has no format") }
        let maps = (try? audio.rtpMaps()) ?? []
        let name = maps.first { $0.payloadType == payloadType }?.encodingName
            ?? [0: "PCMU", 8: "PCMA"][payloadType] ?? "payload type \(payloadType)"
        return MediaAnswer(address: address, payloadType: payloadType, encodingName: name)
    }

    /// What `response` means for `call` (matched by Call-ID beforehand). A 200 with its
    /// answer also fills in the dialog's To tag and remote target.
    static func handle(_ response: SIPMessage, for call: inout Call) throws -> ResponseOutcome {
        guard let status = response.statusCode, let cseq = try? response.cseq() else { return .unrelated }
        switch cseq.method {
        case .invite:
            if status < 200 { return .provisional }
            guard status < 300 else { return .refused(status: status, reason: response.reasonPhrase ?? "") }
            let answer = try mediaAnswer(sdp: response.body)
            guard let toTag = try? response.to()?.tag else { throw Failure(description: "a 200 to the INVITE without a To tag") }
            guard let contact = (try? response.contacts())??.addresses.first?.uri else {
                throw Failure(description: "a 200 to the INVITE without a Contact")
            }
            call.toTag = toTag
            call.remoteTarget = contact
            call.answer = answer
            return .answered(answer)
        case .bye:
            return status < 200 ? .provisional : .byeAnswered(status: status)
        default:
            return .unrelated
        }
    }

    /// The ACK of a 2xx (RFC 3261 §13.2.2.4): a new transaction to the remote target, the
    /// INVITE's CSeq number.
    func ack(_ call: Call) throws -> SIPMessage {
        try inDialog(.ack, call, cseq: 1, branch: branch("a", call))
    }

    /// The ACK of a final failure (RFC 3261 §17.1.1.3): the INVITE's branch and Request-URI,
    /// the response's To.
    func ackFailure(_ call: Call, response: SIPMessage) throws -> SIPMessage {
        guard let via = try call.invite.topVia(), let to = try response.to() else { throw Failure(description: "cannot ACK: no Via or To") }
        let from = try SIPNameAddress(parsing: call.invite.headers.first("From") ?? "")
        return try SIPMessage.request(method: .ack, uri: requestURI(), via: via, from: from, to: to, callID: call.callID, cseq: 1)
    }

    /// The BYE that ends the participant's call (CSeq 2, the INVITE's was 1).
    func bye(_ call: Call) throws -> SIPMessage {
        try inDialog(.bye, call, cseq: 2, branch: branch("b", call))
    }

    /// 200 OK to a request parleyd sent us (an OPTIONS, a BYE of its own), copying what
    /// RFC 3261 §8.2.6 says a response copies.
    static func ok(_ request: SIPMessage, toTag: String) throws -> SIPMessage {
        let hasTag = (try? request.to()?.tag) != nil
        return try request.makeResponse(statusCode: 200, toTag: hasTag ? nil : toTag)
    }

    private func inDialog(_ method: SIPMethod, _ call: Call, cseq: UInt32, branch: String) throws -> SIPMessage {
        guard let toTag = call.toTag, let target = call.remoteTarget else { throw Failure(description: "no dialog yet for \(call.callID)") }
        let localHost = try SIPHost(parsing: local.hostDescription)
        let via = try SIPVia(transport: "UDP", host: localHost, port: local.port, branch: branch, parameters: [SIPParameter(name: "rport")])
        let from = try SIPNameAddress(parsing: call.invite.headers.first("From") ?? "")
        let to = try SIPNameAddress(uri: requestURI(), parameters: [SIPParameter(name: "tag", value: toTag)])
        return try SIPMessage.request(method: method, uri: target, via: via, from: from, to: to, callID: call.callID, cseq: cseq)
    }

    private func branch(_ kind: String, _ call: Call) -> String { branch(kind, call.step, call.participant) }

    /// RFC 3261 §8.1.1.7: begins with the magic cookie, unique per transaction.
    private func branch(_ kind: String, _ step: Int, _ participant: Int) -> String {
        SIPVia.magicCookie + "\(runID)\(kind)\(step)x\(participant)"
    }
}
