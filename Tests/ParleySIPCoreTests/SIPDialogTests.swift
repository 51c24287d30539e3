import Testing
import ParleySIP
import ParleySIPCore

/// Dialogs (RFC 3261 §12): creation on both sides, route sets, target refresh, CSeq
/// rules, and where in-dialog requests and the ACK go.
@Suite struct SIPDialogTests {
    /// Our INVITE to a trunk's gateway, sent through its proxy.
    private let invite = Messages.request(.invite, branch: "z9hG4bKd1", viaHost: Hops.local, callID: "d1@192.0.2.1",
                                          cseq: 101, fromTag: "ours", uri: "sip:+4615550101@trunk.example.test")
    private let via = try! SIPVia(transport: "UDP", host: Hops.local, port: 5060, branch: "z9hG4bKnext")

    private func answer(_ code: Int, tag: String = "theirs", contact: String? = "<sip:gw@198.51.100.20:5070>",
                        recordRoutes: [String] = []) throws -> SIPMessage {
        var response = try invite.makeResponse(statusCode: code, toTag: tag)
        for route in recordRoutes { try response.headers.add(name: "Record-Route", value: route) }
        if let contact { try response.headers.add(name: "Contact", value: contact) }
        return response
    }

    @Test func rfc3261_12_1_2_uacDialogFromA2xx() throws {
        let ok = try answer(200, recordRoutes: ["<sip:p2.example.test;lr>", "<sip:p1.example.test;lr>"])
        let dialog = try SIPDialog(uacRequest: invite, response: ok)
        #expect(dialog.state == .confirmed)
        #expect(dialog.id == SIPDialogID(callID: "d1@192.0.2.1", localTag: "ours", remoteTag: "theirs"))
        #expect(dialog.localSequence == 101)
        #expect(dialog.remoteSequence == nil)
        #expect(dialog.remoteTarget == Messages.uri("sip:gw@198.51.100.20:5070"))
        // Reversed for the UAC: the proxy nearest to us first.
        #expect(dialog.routeSet.map(\.uri.description) == ["sip:p1.example.test;lr", "sip:p2.example.test;lr"])
        #expect(dialog.nextHop == Messages.uri("sip:p1.example.test;lr"))
    }

    @Test func rfc3261_12_1_2_earlyDialogFromA1xxWithTagThenConfirmed() throws {
        let ringing = try answer(180, contact: "<sip:gw-early@198.51.100.20>", recordRoutes: ["<sip:p1.example.test;lr>"])
        var dialog = try SIPDialog(uacRequest: invite, response: ringing)
        #expect(dialog.state == .early)
        #expect(dialog.remoteTarget == Messages.uri("sip:gw-early@198.51.100.20"))
        // The 2xx confirms it and its Record-Route and Contact replace the early ones.
        let ok = try answer(200, recordRoutes: ["<sip:p9.example.test;lr>"])
        let updated = dialog.update(withResponse: ok, to: invite)
        #expect(updated)
        #expect(dialog.state == .confirmed)
        #expect(dialog.routeSet.map(\.uri.description) == ["sip:p9.example.test;lr"])
        #expect(dialog.remoteTarget == Messages.uri("sip:gw@198.51.100.20:5070"))
        // Another fork's 2xx is not this dialog's.
        let fork = try answer(200, tag: "fork2")
        let updatedByFork = dialog.update(withResponse: fork, to: invite)
        #expect(!updatedByFork)
    }

    @Test func refusesWhatCannotMakeADialog() throws {
        let noTag = try invite.makeResponse(statusCode: 180)
        #expect(throws: SIPDialogError.self) { try SIPDialog(uacRequest: invite, response: noTag) }
        #expect(throws: SIPDialogError.self) { try SIPDialog(uacRequest: invite, response: try answer(486)) }
        #expect(throws: SIPDialogError.self) { try SIPDialog(uacRequest: invite, response: try answer(100)) }
    }

    @Test func rfc3261_12_2_1_1_looseRoutingKeepsTheRemoteTargetAsRequestURI() throws {
        var dialog = try SIPDialog(uacRequest: invite, response: try answer(200, recordRoutes: ["<sip:p1.example.test;lr>"]))
        let bye = try dialog.makeRequest(.bye, via: via)
        #expect(bye.requestURI == Messages.uri("sip:gw@198.51.100.20:5070"))
        #expect(try bye.routes().map(\.uri.description) == ["sip:p1.example.test;lr"])
        #expect(try bye.cseq() == SIPCSeq(sequence: 102, method: .bye))
        #expect(try bye.to()?.tag == "theirs")
        #expect(try bye.from()?.tag == "ours")
        #expect(try bye.callID() == "d1@192.0.2.1")
        #expect(bye.headers["contact"].isEmpty)  // BYE refreshes no target
        #expect(dialog.localSequence == 102)
        let reinvite = try dialog.makeRequest(.invite, via: via, contentType: .sdp, body: Array("v=0\r\n".utf8))
        #expect(try reinvite.cseq()?.sequence == 103)
        #expect(try reinvite.contacts()?.addresses.first?.uri == Messages.uri("sip:alice@192.0.2.10"))
        #expect(try reinvite.contentType() == .sdp)
    }

    @Test func rfc3261_12_2_1_1_strictRouterBecomesTheRequestURI() throws {
        var dialog = try SIPDialog(uacRequest: invite, response: try answer(200, recordRoutes: ["<sip:p2.example.test>", "<sip:strict.example.test>"]))
        let bye = try dialog.makeRequest(.bye, via: via)
        // The first route (no ;lr) is the Request-URI; the remote target goes last in Route.
        #expect(bye.requestURI == Messages.uri("sip:strict.example.test"))
        #expect(try bye.routes().map(\.uri.description) == ["sip:p2.example.test", "sip:gw@198.51.100.20:5070"])
        #expect(dialog.nextHop == Messages.uri("sip:strict.example.test"))
    }

    /// The classic: the INVITE went to the carrier's proxy, the 200 came back from it,
    /// and its Contact names the media gateway. Without Record-Route the proxy is out of
    /// the dialog: the ACK (and BYE) must go to the gateway, with the gateway's URI as
    /// Request-URI. Sending it to the proxy (the INVITE's hop) or to where the 200 came
    /// from is the bug after which carriers hang up 32 s into the call.
    @Test func rfc3261_13_2_2_4_ackGoesToTheContactNotWhereTheInviteWent() throws {
        let dialog = try SIPDialog(uacRequest: invite, response: try answer(200))
        let ack = try dialog.makeAck(inviteSequence: 101, via: via)
        #expect(ack.method == .ack)
        #expect(ack.requestURI == Messages.uri("sip:gw@198.51.100.20:5070"))
        #expect(try ack.routes().isEmpty)
        #expect(try ack.cseq() == SIPCSeq(sequence: 101, method: .ack))
        #expect(dialog.nextHop == Messages.uri("sip:gw@198.51.100.20:5070"))
        #expect(dialog.localSequence == 101)  // the ACK takes no new number

        // With the proxy record-routing, the ACK goes through it, still to the gateway.
        let routed = try SIPDialog(uacRequest: invite, response: try answer(200, recordRoutes: ["<sip:198.51.100.5;lr>"]))
        let routedAck = try routed.makeAck(inviteSequence: 101, via: via)
        #expect(routedAck.requestURI == Messages.uri("sip:gw@198.51.100.20:5070"))
        #expect(try routedAck.routes().map(\.uri.description) == ["sip:198.51.100.5;lr"])
        #expect(routed.nextHop == Messages.uri("sip:198.51.100.5;lr"))
    }

    @Test func rfc3261_12_2_1_2_2xxToReInviteRefreshesTheTarget() throws {
        var dialog = try SIPDialog(uacRequest: invite, response: try answer(200))
        let reinvite = try dialog.makeRequest(.invite, via: via)
        var ok = try reinvite.makeResponse(statusCode: 200)
        try ok.headers.add(name: "Contact", value: "<sip:gw@198.51.100.21>")
        dialog.update(withResponse: ok, to: reinvite)
        #expect(dialog.remoteTarget == Messages.uri("sip:gw@198.51.100.21"))
        // A 2xx to a BYE refreshes nothing.
        let bye = try dialog.makeRequest(.bye, via: via)
        var byeOK = try bye.makeResponse(statusCode: 200)
        try byeOK.headers.add(name: "Contact", value: "<sip:elsewhere@198.51.100.99>")
        dialog.update(withResponse: byeOK, to: bye)
        #expect(dialog.remoteTarget == Messages.uri("sip:gw@198.51.100.21"))
    }

    @Test func rfc3261_12_2_2_peerRequestsChecked() throws {
        var dialog = try SIPDialog(uacRequest: invite, response: try answer(200))
        func peerRequest(_ method: SIPMethod, cseq: UInt32, fromTag: String = "theirs", toTag: String = "ours",
                         contact: String? = nil) -> SIPMessage {
            var request = Messages.request(method, branch: "z9hG4bKp\(cseq)", callID: "d1@192.0.2.1", cseq: cseq,
                                           fromTag: fromTag, toTag: toTag)
            if let contact { try! request.headers.set(name: "Contact", value: contact) }
            return request
        }
        try dialog.receive(request: peerRequest(.invite, cseq: 7, contact: "<sip:gw@198.51.100.30>"))
        #expect(dialog.remoteSequence == 7)
        #expect(dialog.remoteTarget == Messages.uri("sip:gw@198.51.100.30"))
        // The ACK of that re-INVITE carries its CSeq and changes nothing.
        try dialog.receive(request: peerRequest(.ack, cseq: 7))
        do {
            try dialog.receive(request: peerRequest(.bye, cseq: 6))
            Issue.record("an out-of-order request was accepted")
        } catch {
            #expect(error.kind == .outOfOrder)
            #expect(error.statusCode == 500)
        }
        do {
            try dialog.receive(request: peerRequest(.bye, cseq: 8, toTag: "someone-else"))
            Issue.record("a request of another dialog was accepted")
        } catch {
            #expect(error.statusCode == 481)
        }
        try dialog.receive(request: peerRequest(.bye, cseq: 8))
        #expect(dialog.remoteSequence == 8)
    }

    @Test func rfc3261_12_1_1_uasDialog() throws {
        var request = Messages.request(.invite, branch: "z9hG4bKin", callID: "in1@x", cseq: 5, fromTag: "caller")
        try request.headers.add(name: "Record-Route", value: "<sip:p1.example.test;lr>, <sip:p2.example.test;lr>")
        var ok = try request.makeResponse(statusCode: 200, toTag: "callee")
        try ok.headers.add(name: "Contact", value: "<sip:parley@192.0.2.1>")
        var dialog = try SIPDialog(uasRequest: request, response: ok)
        #expect(dialog.id == SIPDialogID(callID: "in1@x", localTag: "callee", remoteTag: "caller"))
        #expect(dialog.remoteSequence == 5)
        #expect(dialog.localSequence == nil)
        #expect(dialog.remoteTarget == Messages.uri("sip:alice@192.0.2.10"))
        // In order for the UAS.
        #expect(dialog.routeSet.map(\.uri.description) == ["sip:p1.example.test;lr", "sip:p2.example.test;lr"])
        let bye = try dialog.makeRequest(.bye, via: via)
        #expect(try bye.cseq()?.sequence == 1)
        #expect(try bye.from()?.tag == "callee")
        #expect(try bye.to()?.tag == "caller")
        #expect(bye.requestURI == Messages.uri("sip:alice@192.0.2.10"))
    }

    @Test func refusesAckAndCancelAsOrdinaryRequests() throws {
        var dialog = try SIPDialog(uacRequest: invite, response: try answer(200))
        for method in [SIPMethod.ack, .cancel] {
            do {
                _ = try dialog.makeRequest(method, via: via)
                Issue.record("\(method) built as an ordinary request")
            } catch {
                #expect(error.kind == .invalidArgument)
            }
        }
        #expect(dialog.localSequence == 101)
    }
}
