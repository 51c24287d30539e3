import Foundation
import Testing
@testable import ParleyBench

/// The messages the conference bench's SIP caller sends parleyd, and what it makes of the
/// answers, without a socket. Messages are read back through the SIP parser
/// (`ConferenceSIPCaller.message`), as parleyd reads them.
@Suite struct ConferenceSIPCallerTests {
    static let caller = ConferenceSIPCaller(local: .ipv4Loopback(port: 40_000), server: .ipv4Loopback(port: 5070),
                                            number: "46700000900", runID: "run1", opusPayloadType: 111)
    /// The participant's load socket.
    static let media = caller.local.withPort(41_234)

    static let opusAnswer = """
        v=0\r
        o=- 1 1 IN IP4 127.0.0.1\r
        s=-\r
        c=IN IP4 127.0.0.1\r
        t=0 0\r
        m=audio 10042 RTP/AVP 111\r
        a=rtpmap:111 opus/48000/2\r
        a=sendrecv\r

        """

    /// parleyd's 200 to `call`'s INVITE, answering with `sdp`, with a Contact unless nil.
    static func ok(_ call: ConferenceSIPCaller.Call, sdp: String, contact: String? = "<sip:parleyd@127.0.0.1:5070>") throws
        -> ConferenceSIPCaller.Call {
        var response = try call.invite.makeResponse(statusCode: 200, toTag: "srv9")
        if let contact { try response.headers.add(name: "Contact", value: contact) }
        try response.headers.add(name: "Content-Type", value: "application/sdp")
        response.body = Array(sdp.utf8)
        var copy = call
        _ = try ConferenceSIPCaller.handle(ConferenceSIPCaller.message(response.serialized()), for: &copy)
        return copy
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func theInviteCallsTheRoomsNumberAndOffersPlainRTPOpusAtTheParticipantsSocket() throws {
        let call = try Self.caller.invite(participant: 7, step: 2, media: Self.media)
        let invite = try ConferenceSIPCaller.message(call.invite.serialized())
        #expect(invite.method == .invite)
        #expect(invite.requestURI?.description == "sip:46700000900@127.0.0.1:5070")
        #expect(try invite.callID() == "run1-2-7" && call.callID == "run1-2-7")
        #expect(invite.headers.first("CSeq") == "1 INVITE")
        let via = try #require(try invite.topVia())
        #expect(via.transport == "UDP" && via.host.description == "127.0.0.1" && via.port == 40_000)
        #expect(via.hasRFC3261Branch)
        #expect(try invite.from()?.tag == call.fromTag && (try invite.to()?.tag) == nil)
        #expect(try invite.contacts()?.addresses.first?.uri.port == 40_000)
        #expect(invite.headers.first("Content-Type") == "application/sdp")

        // One audio stream, plain RTP at the participant's socket, Opus alone (parleyd's
        // plain-RTP leg would answer PCMU first were it offered), nothing for SRTP or ICE.
        let offer = Self.text(invite.body).split(separator: "\r\n").map(String.init)
        #expect(offer.contains("c=IN IP4 127.0.0.1"))
        #expect(offer.filter { $0.hasPrefix("m=") } == ["m=audio 41234 RTP/AVP 111"])
        #expect(offer.filter { $0.hasPrefix("a=rtpmap:") } == ["a=rtpmap:111 opus/48000/2"])
        #expect(!offer.contains { $0.hasPrefix("a=crypto") || $0.hasPrefix("a=ice-") || $0.hasPrefix("a=fingerprint") })
    }

    @Test func participantsAndStepsGetDistinctCallsAndBranches() throws {
        let calls = try [(1, 1), (2, 1), (1, 2)].map { try Self.caller.invite(participant: $0.0, step: $0.1, media: Self.media) }
        #expect(Set(calls.map(\.callID)).count == 3)
        #expect(Set(try calls.map { try #require(try $0.invite.topVia()?.branch) }).count == 3)
        #expect(Set(calls.map { $0.invite.headers.first("From") ?? "" }).count == 3, "a caller number and tag each")
    }

    @Test func theTwoHundredGivesTheDialogAndWhereToSendTheRTP() throws {
        var call = try Self.caller.invite(participant: 0, step: 1, media: Self.media)
        let trying = try call.invite.makeResponse(statusCode: 100)
        #expect(try ConferenceSIPCaller.handle(trying, for: &call) == .provisional)
        #expect(call.answer == nil)
        call = try Self.ok(call, sdp: Self.opusAnswer)
        #expect(call.answer == ConferenceSIPCaller.MediaAnswer(address: Self.caller.local.withPort(10_042), payloadType: 111,
                                                              encodingName: "opus"))
        #expect(call.toTag == "srv9" && call.remoteTarget?.description == "sip:parleyd@127.0.0.1:5070")

        // The ACK and the BYE go to the Contact, in the dialog, each its own transaction.
        let ack = try ConferenceSIPCaller.message(Self.caller.ack(call).serialized())
        let bye = try ConferenceSIPCaller.message(Self.caller.bye(call).serialized())
        #expect(ack.method == .ack && bye.method == .bye)
        for request in [ack, bye] {
            #expect(request.requestURI?.description == "sip:parleyd@127.0.0.1:5070")
            #expect(try request.callID() == call.callID)
            #expect(try request.from()?.tag == call.fromTag && (try request.to()?.tag) == "srv9")
        }
        #expect(ack.headers.first("CSeq") == "1 ACK" && bye.headers.first("CSeq") == "2 BYE")
        let inviteBranch = try call.invite.topVia()?.branch
        #expect(try ack.topVia()?.branch != inviteBranch && (try bye.topVia()?.branch) != inviteBranch)
        #expect(try ConferenceSIPCaller.handle(try bye.makeResponse(statusCode: 200), for: &call) == .byeAnswered(status: 200))
    }

    @Test func aRefusalIsAckedOnTheInvitesBranch() throws {
        var call = try Self.caller.invite(participant: 3, step: 1, media: Self.media)
        let busy = try call.invite.makeResponse(statusCode: 486, toTag: "srv1")
        #expect(try ConferenceSIPCaller.handle(busy, for: &call) == .refused(status: 486, reason: "Busy Here"))
        let ack = try Self.caller.ackFailure(call, response: busy)
        #expect(ack.method == .ack && ack.requestURI == call.invite.requestURI)
        #expect(try ack.topVia()?.branch == (try call.invite.topVia()?.branch))
        #expect(try ack.to()?.tag == "srv1")
    }

    @Test func anAnswerThatChoosesPCMUOrCarriesNoUsableStreamIsReported() throws {
        // No rtpmap for a static payload type: RFC 3551's name. The adapter refuses a
        // non-Opus answer by this name.
        let pcmu = Self.opusAnswer.replacingOccurrences(of: "10042 RTP/AVP 111", with: "10044 RTP/AVP 0")
            .replacingOccurrences(of: "a=rtpmap:111 opus/48000/2\r\n", with: "")
        #expect(try ConferenceSIPCaller.mediaAnswer(sdp: Array(pcmu.utf8))
            == ConferenceSIPCaller.MediaAnswer(address: Self.caller.local.withPort(10_044), payloadType: 0, encodingName: "PCMU"))
        for broken in [Self.opusAnswer.replacingOccurrences(of: "m=audio 10042", with: "m=audio 0"),
                       Self.opusAnswer.replacingOccurrences(of: "m=audio", with: "m=video"),
                       "not sdp"] {
            #expect(throws: ConferenceSIPCaller.Failure.self) { try ConferenceSIPCaller.mediaAnswer(sdp: Array(broken.utf8)) }
        }
        // A 200 without a Contact makes no dialog.
        let call = try Self.caller.invite(participant: 0, step: 1, media: Self.media)
        #expect(throws: ConferenceSIPCaller.Failure.self) { try Self.ok(call, sdp: Self.opusAnswer, contact: nil) }
    }

    @Test func parleydsOwnRequestsGetATwoHundredAndOversizedDatagramsAreRefused() throws {
        let options = try ConferenceSIPCaller.message(Array("""
            OPTIONS sip:127.0.0.1:40000 SIP/2.0\r
            Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bKopt1\r
            Max-Forwards: 70\r
            From: <sip:parleyd@127.0.0.1>;tag=o1\r
            To: <sip:127.0.0.1:40000>\r
            Call-ID: opt-1\r
            CSeq: 5 OPTIONS\r
            Content-Length: 0\r
            \r

            """.utf8))
        let ok = try ConferenceSIPCaller.ok(options, toTag: "bench")
        #expect(try ok.statusCode == 200 && ok.to()?.tag == "bench" && ok.headers.first("CSeq") == "5 OPTIONS")
        #expect(throws: ConferenceSIPCaller.Failure.self) {
            try ConferenceSIPCaller.message([UInt8](repeating: 65, count: ConferenceSIPCaller.maximumDatagram + 1))
        }
    }
}
