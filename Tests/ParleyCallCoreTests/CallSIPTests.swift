import Foundation
import ParleyCallModel
import ParleyCallCore
import ParleySignaling
import Testing

/// Calls to phone numbers and SIP addresses: the SIP party goes through the call's states
/// on what the SIP side reports, in virtual time, with the exact notifications it and the
/// caller get and the media instructions in between.
@Suite("Calls to SIP parties")
struct CallSIPTests {
    let alice = CallWorld.device("alice", "a1")
    let bob1 = CallWorld.device("bob", "b1")
    let id = "4b1e7c2a-9d3f-4e60-8a15-c27f3d9e0b44"
    static let number = "+46701234567"
    static let cli = "+46812345678"
    static let early = "v=0\r\no=carrier 1 1 IN IP4 198.51.100.7\r\ns=-\r\nt=0 0\r\nm=audio 30000 RTP/AVP 8 101\r\nc=IN IP4 198.51.100.7\r\n"
    static let final = "v=0\r\no=carrier 1 2 IN IP4 198.51.100.7\r\ns=-\r\nt=0 0\r\nm=audio 30002 RTP/AVP 0 101\r\nc=IN IP4 198.51.100.7\r\n"

    static func dialling(_ configuration: CallConfiguration = CallConfiguration()) -> CallConfiguration {
        var configuration = configuration
        configuration.sipDialling = true
        return configuration
    }

    func world(configuration: CallConfiguration = CallSIPTests.dialling(), router: any CallRouter = PresenceRouter()) -> CallWorld {
        var world = CallWorld(configuration: configuration, router: router)
        world.connect(alice)
        world.connect(bob1)
        return world
    }

    /// The SIP party of a phone call to `number` through the default trunk with `cli`.
    func phoneParty(number: String = number, cli: String = cli) -> SIPParty {
        SIPParty(callID: id, destination: .phone(PhoneRoute(number: number, callerID: cli)))
    }

    func start(_ world: inout CallWorld, to: SignalingMessage.Address, cli: String? = nil, headers: [String: String] = [:]) {
        let start = SignalingMessage.CallStart(
            requestID: world.nextRequestID(), callID: id, to: to, headers: headers, sdp: CallWorld.callerOffer, cli: cli)
        world.perform(world.registry.handleRequest(.callStart(start), from: alice, now: world.now))
    }

    /// A phone call placed and offered: the SIP party got its INVITE's offer.
    func offeredPhoneCall(configuration: CallConfiguration = CallSIPTests.dialling()) -> CallWorld {
        var world = world(configuration: configuration)
        start(&world, to: .phone(Self.number), cli: Self.cli)
        return world
    }

    func report(_ world: inout CallWorld, _ event: SIPCallEvent, party: SIPParty? = nil) {
        world.perform(world.registry.handleSIP(event, from: party ?? phoneParty(), now: world.now))
    }

    /// What the SIP party was told, as short names (`offered`, `ended:canceled`, ...).
    func told(_ world: CallWorld, _ party: SIPParty? = nil) -> [String] {
        let party = party ?? phoneParty()
        return world.sipLog.filter { $0.party == party }.map { entry in
            switch entry.notification {
            case .offered: "offered"
            case .answered: "answered"
            case .established: "established"
            case .ended(_, let cause, _, _): "ended:\(cause.rawValue)"
            case .mediaReady: "mediaReady"
            case .progress: "progress"
            case .ringing: "ringing"
            case .dtmf: "dtmf"
            case .talking: "talking"
            case .earlyMedia: "earlyMedia"
            case .held(_, let held, _, _): held ? "held" : "resumed"
            }
        }
    }

    func endedError(_ world: CallWorld) -> SignalingMessage.CallError? {
        for case .ended(_, _, let error, _) in world.sipLog.map(\.notification) { return error }
        return nil
    }

    // MARK: Offer, ringing, early media, answer

    @Test("A phone call: the caller's leg, then the SIP party's leg, whose offer goes to the party with the headers and the CLI")
    func offer() throws {
        var world = world()
        start(&world, to: .phone(Self.number), cli: Self.cli, headers: ["X-Order": "1187"])
        #expect(world.log(alice) == ["result", "call.media", "call.progress"])
        let party = phoneParty()
        #expect(world.mediaLog == [
            .answerCaller(callID: id, offer: CallWorld.callerOffer, topology: .gateway),
            .offerCallee(callID: id, party: .sip(party)),
        ])
        #expect(told(world) == ["offered"])
        guard case .offered(let offer) = try #require(world.sipLog.first).notification else { return }
        #expect(offer == CallOffer(
            callID: id, from: .user("alice"), headers: ["X-Order": "1187"], video: false,
            time: world.records[0].times.startedTime, sdp: CallWorld.anchorRTPOffer, cli: Self.cli))
        #expect(world.registry.record(of: id)?.state == .progressing)
        // The callee user's devices have nothing to do with it.
        #expect(world.log(bob1) == [])
        #expect(world.registry.callIDs(of: alice) == [id])
    }

    @Test("100 Trying changes nothing: the caller heard call.progress when the INVITE was asked for")
    func trying() {
        var world = offeredPhoneCall()
        let before = world.records.count
        report(&world, .trying)
        #expect(world.log(alice) == ["result", "call.media", "call.progress"])
        #expect(world.records.count == before)
        #expect(world.registry.record(of: id)?.state == .progressing)
    }

    @Test("180: the caller rings, once; 200 with SDP: the leg takes the answer and is bridged; both legs connected: established")
    func ringingThenAnswer() throws {
        var world = offeredPhoneCall()
        world.advance(by: .seconds(1))
        report(&world, .ringing(earlySDP: nil))
        report(&world, .ringing(earlySDP: nil))
        #expect(world.log(alice) == ["result", "call.media", "call.progress", "call.ringing"])
        #expect(world.registry.record(of: id)?.state == .ringing)
        #expect(world.registry.record(of: id)?.times.rungTime == world.now.unixMilliseconds)

        world.advance(by: .seconds(3))
        world.media(.legConnected(.caller), id)
        report(&world, .answered(sdp: Self.final))
        let party = phoneParty()
        #expect(world.mediaLog.suffix(2) == [
            .acceptAnswer(callID: id, party: .sip(party), answer: Self.final),
            .bridge(callID: id, party: .sip(party)),
        ])
        #expect(world.registry.record(of: id)?.state == .answered)
        world.media(.legConnected(.callee(.sip(party))), id)
        #expect(world.registry.record(of: id)?.state == .established)
        #expect(world.log(alice) == ["result", "call.media", "call.progress", "call.ringing", "call.answered", "call.established"])
        #expect(told(world) == ["offered", "answered", "established"])
        let record = try #require(world.registry.record(of: id))
        #expect(record.answeredDeviceID == nil)
        #expect(record.times.answeredTime == world.now.unixMilliseconds)
        #expect(record.isAnsweringLeg(.callee(.sip(party))))
        #expect(!record.isAnsweringLeg(.caller))
        #expect(record.answeringParty == nil)
    }

    @Test("183 with SDP: early media, the first SDP is the answer and the legs are bridged at once; the 200 changes neither")
    func earlyMediaThenAnswer() throws {
        var world = offeredPhoneCall()
        let party = phoneParty()
        report(&world, .ringing(earlySDP: Self.early))
        #expect(world.log(alice) == ["result", "call.media", "call.progress", "call.ringing"])
        #expect(world.mediaLog.suffix(2) == [
            .acceptAnswer(callID: id, party: .sip(party), answer: Self.early),
            .bridge(callID: id, party: .sip(party)),
        ])
        // A second 18x with another SDP is not a new answer.
        report(&world, .ringing(earlySDP: Self.final))
        #expect(world.mediaLog.count == 4)
        // The plain RTP leg connects (latches) while the far side plays its ringback.
        world.media(.legConnected(.caller), id)
        world.media(.legConnected(.callee(.sip(party))), id)
        #expect(world.registry.record(of: id)?.state == .ringing)

        report(&world, .answered(sdp: Self.final))
        #expect(world.mediaLog.count == 4)
        #expect(world.registry.record(of: id)?.state == .established)
        #expect(world.log(alice) == ["result", "call.media", "call.progress", "call.ringing", "call.answered", "call.established"])
        // A retransmitted 200 and a late 180 change nothing.
        let before = world.sipLog.count
        report(&world, .answered(sdp: Self.final))
        report(&world, .ringing(earlySDP: nil))
        #expect(world.sipLog.count == before)
        #expect(world.log(alice).count == 6)
    }

    @Test("A 200 straight after the INVITE (no 18x): answered without ringing, then established")
    func answerWithoutRinging() {
        var world = offeredPhoneCall()
        world.media(.legConnected(.caller), id)
        report(&world, .answered(sdp: Self.final))
        world.media(.legConnected(.callee(.sip(phoneParty()))), id)
        #expect(world.log(alice) == ["result", "call.media", "call.progress", "call.answered", "call.established"])
        #expect(world.records.last?.times.rungTime == nil)
    }

    @Test("A 200 without SDP after an INVITE with an offer and no early answer: media_failed, the party told")
    func answerWithoutSDP() throws {
        var world = offeredPhoneCall()
        report(&world, .answered(sdp: nil))
        let ended = try #require(world.ended(alice))
        #expect(ended.cause == .error)
        #expect(ended.error == .init(code: .mediaFailed, message: "the SIP answer (2xx) carried no SDP"))
        #expect(told(world) == ["offered", "ended:error"])
        #expect(world.mediaLog.last == .closeAll(callID: id))
    }

    // MARK: Hang-ups

    @Test("BYE from the SIP side: hungUp to the caller, the party told, every leg closed")
    func byeFromSIP() throws {
        var world = established()
        world.advance(by: .seconds(30))
        report(&world, .hungUp)
        #expect(world.log(alice).last == "call.ended:hungUp")
        #expect(told(world) == ["offered", "answered", "established", "ended:hungUp"])
        #expect(world.mediaLog.last == .closeAll(callID: id))
        let record = try #require(world.records.last)
        #expect(record.state == .ended && record.endCause == .hungUp)
        #expect(record.durationMillis == 30_000)
        #expect(world.registry.activeCalls.isEmpty)
        // Reports after the end are ignored.
        report(&world, .hungUp)
        report(&world, .failed(status: 500, reason: "Server Internal Error"))
        #expect(told(world).count == 4)
    }

    @Test("The caller hangs up after the answer: the party is told hungUp (BYE)")
    func byeFromCaller() {
        var world = established()
        world.hangup(alice, id)
        #expect(world.log(alice).suffix(2) == ["result", "call.ended:hungUp"])
        #expect(told(world).last == "ended:hungUp")
        // REST hang-up of an established call is the same.
        var other = established()
        other.perform((try? other.registry.hangUp(callID: id, now: other.now)) ?? [])
        #expect(told(other).last == "ended:hungUp")
    }

    @Test("The caller hangs up before the answer: the party is told canceled (CANCEL), also while it rings with early media")
    func cancelBeforeAnswer() throws {
        var world = offeredPhoneCall()
        report(&world, .ringing(earlySDP: Self.early))
        world.hangup(alice, id)
        #expect(world.log(alice).suffix(2) == ["result", "call.ended:canceled"])
        #expect(told(world) == ["offered", "ended:canceled"])
        let details = try #require(world.sipLog.last.flatMap { entry -> CallTimes? in
            if case .ended(_, _, _, let details) = entry.notification { return details }
            return nil
        })
        #expect(details.answeredTime == nil)
        #expect(world.mediaLog.last == .closeAll(callID: id))
        // The 487 that answers the CANCEL comes after the end: ignored.
        report(&world, .failed(status: 487, reason: "Request Terminated"))
        #expect(told(world).count == 2)
    }

    @Test("The caller hangs up before the SIP leg was offered: no INVITE went out, so the party is told nothing")
    func cancelBeforeOffer() {
        var world = world()
        world.autoMedia = false
        start(&world, to: .phone(Self.number), cli: Self.cli)
        world.media(.callerLegReady(sdp: CallWorld.anchorAnswer), id)
        #expect(world.mediaLog.last == .offerCallee(callID: id, party: .sip(phoneParty())))
        // The SIP side cannot report for a party it was not told about.
        report(&world, .ringing(earlySDP: nil))
        #expect(world.log(alice) == ["result", "call.media", "call.progress"])
        world.hangup(alice, id)
        #expect(world.log(alice).last == "call.ended:canceled")
        #expect(world.sipLog.isEmpty)
        // The leg offer that arrives late is ignored.
        world.media(.calleeLegReady(.sip(phoneParty()), sdp: CallWorld.anchorRTPOffer), id)
        #expect(world.sipLog.isEmpty)
    }

    @Test("A BYE before the answer (not SIP, but reported) is a callee hanging up before answering: denied")
    func byeBeforeAnswer() {
        var world = offeredPhoneCall()
        report(&world, .hungUp)
        #expect(world.log(alice).last == "call.ended:denied")
    }

    // MARK: Failures

    @Test("Final failure statuses map to end causes", arguments: [
        (486, "Busy Here", CallEndCause.denied),
        (600, "Busy Everywhere", .denied),
        (603, "Decline", .denied),
        (408, "Request Timeout", .noAnswer),
        (480, "Temporarily Unavailable", .noAnswer),
        (487, "Request Terminated", .canceled),
        (404, "Not Found", .error),
        (503, "Service Unavailable", .error),
        (302, "Moved Temporarily", .error),
    ])
    func failureMapping(status: Int, reason: String, cause: CallEndCause) throws {
        var world = offeredPhoneCall()
        report(&world, .ringing(earlySDP: nil))
        report(&world, .failed(status: status, reason: reason))
        let ended = try #require(world.ended(alice))
        #expect(ended.cause == cause)
        #expect(told(world) == ["offered", "ended:\(cause.rawValue)"])
        if cause == .error {
            let error = SignalingMessage.CallError(code: .sipError, message: "SIP \(status) \(reason)")
            #expect(ended.error == error)
            #expect(endedError(world) == error)
            #expect(world.records.last?.error == CallError(code: "sip_error", message: "SIP \(status) \(reason)"))
        } else {
            #expect(ended.error == nil)
        }
        #expect(world.mediaLog.last == .closeAll(callID: id))
        #expect(world.registry.activeCalls.isEmpty)
    }

    @Test("The far side's reason phrase is untrusted text: control characters become spaces, the message is bounded")
    func hostileReason() {
        let (cause, error) = SIPCallEvent.ending(status: 500, reason: "Oops\r\nX-Injected: 1" + String(repeating: "z", count: 5000))
        #expect(cause == .error)
        #expect(error?.code == .sipError)
        #expect(error?.message.hasPrefix("SIP 500 Oops  X-Injected: 1zzz") == true)
        #expect(error?.message.utf8.count == 1024)
        #expect(SIPCallEvent.ending(status: 500, reason: "").error?.message == "SIP 500")
    }

    @Test("A failure of the dialog after the answer ends the call with sip_error")
    func failureAfterAnswer() throws {
        var world = established()
        report(&world, .failed(status: 481, reason: "Call/Transaction Does Not Exist"))
        let ended = try #require(world.ended(alice))
        #expect(ended.cause == .error)
        #expect(ended.error == .init(code: .sipError, message: "SIP 481 Call/Transaction Does Not Exist"))
    }

    @Test("The SIP leg fails before it was offered (the anchor cannot open it): media_failed, the party told nothing")
    func legFailsBeforeOffer() throws {
        var world = world()
        world.autoMedia = false
        start(&world, to: .phone(Self.number), cli: Self.cli)
        world.media(.callerLegReady(sdp: CallWorld.anchorAnswer), id)
        world.media(.legFailed(.callee(.sip(phoneParty())), reason: "plain RTP legs not wired yet"), id)
        let ended = try #require(world.ended(alice))
        #expect(ended.error == .init(code: .mediaFailed, message: "the SIP leg could not be set up: plain RTP legs not wired yet"))
        #expect(world.sipLog.isEmpty)
        #expect(world.mediaLog.suffix(2) == [.closeLeg(callID: id, leg: .callee(.sip(phoneParty()))), .closeAll(callID: id)])
    }

    @Test("The SIP leg fails after the INVITE (its early answer refused): media_failed, the party told (CANCEL)")
    func legFailsWhileRinging() throws {
        var world = offeredPhoneCall()
        report(&world, .ringing(earlySDP: Self.early))
        world.media(.legFailed(.callee(.sip(phoneParty())), reason: "answer: no common codec"), id)
        #expect(world.ended(alice)?.error?.code == .mediaFailed)
        #expect(told(world) == ["offered", "ended:error"])
        #expect(endedError(world) == .init(code: .mediaFailed, message: "media leg failed: answer: no common codec"))
    }

    @Test("Reports about another SIP party, or a call that does not exist, are ignored")
    func strangeReports() {
        var world = offeredPhoneCall()
        let other = SIPParty(callID: id, destination: .uri("sip:mallory@example.test"))
        report(&world, .answered(sdp: Self.final), party: other)
        report(&world, .failed(status: 486, reason: "Busy Here"), party: other)
        let unknown = SIPParty(callID: "00000000-0000-4000-8000-000000000000", destination: .uri("sip:x@example.test"))
        report(&world, .hungUp, party: unknown)
        #expect(world.registry.record(of: id)?.state == .progressing)
        #expect(world.log(alice) == ["result", "call.media", "call.progress"])
    }

    // MARK: Timers

    @Test("Ring timeout: noAnswer when the far side never rang, timeout when it did; the party is told (CANCEL)")
    func ringTimeout() {
        var configuration = Self.dialling()
        configuration.ringTimeout = .seconds(20)
        var silent = offeredPhoneCall(configuration: configuration)
        silent.advance(by: .seconds(19))
        #expect(silent.registry.record(of: id)?.state == .progressing)
        silent.advance(by: .seconds(1))
        #expect(silent.log(alice).last == "call.ended:noAnswer")
        #expect(told(silent) == ["offered", "ended:noAnswer"])

        var ringing = offeredPhoneCall(configuration: configuration)
        report(&ringing, .ringing(earlySDP: Self.early))
        ringing.advance(by: .seconds(20))
        #expect(ringing.log(alice).last == "call.ended:timeout")
        #expect(told(ringing) == ["offered", "ended:timeout"])
    }

    @Test("Media not established within mediaSetupTimeout of the 200: media_failed, the party told (BYE)")
    func mediaSetupTimeout() {
        var configuration = Self.dialling()
        configuration.mediaSetupTimeout = .seconds(5)
        var world = offeredPhoneCall(configuration: configuration)
        report(&world, .answered(sdp: Self.final))
        world.media(.legConnected(.caller), id)
        world.advance(by: .seconds(5))
        #expect(world.ended(alice)?.error?.code == .mediaFailed)
        #expect(told(world) == ["offered", "answered", "ended:error"])
    }

    @Test("The caller drops and does not resume: inactive, the party told; the maximum call length still applies")
    func callerGraceAndMaximumLength() {
        var configuration = Self.dialling()
        configuration.reconnectGrace = .seconds(10)
        var world = established(configuration: configuration)
        world.disconnect(alice)
        world.advance(by: .seconds(9))
        world.connect(alice, resumed: true)
        world.advance(by: .seconds(30))
        #expect(world.registry.record(of: id)?.state == .established)
        world.disconnect(alice)
        world.advance(by: .seconds(10))
        #expect(world.ended(alice)?.cause == .inactive)
        #expect(told(world).last == "ended:inactive")

        configuration.maximumCallLength = .seconds(60)
        var long = established(configuration: configuration)
        long.advance(by: .seconds(60))
        #expect(long.ended(alice)?.cause == .timeout)
        #expect(told(long).last == "ended:timeout")
    }

    @Test("The SIP leg goes quiet after the answer: inactive")
    func sipLegInactive() {
        var world = established()
        world.media(.legInactive(.callee(.sip(phoneParty()))), id)
        #expect(world.ended(alice)?.cause == .inactive)
        #expect(told(world).last == "ended:inactive")
    }

    // MARK: DTMF

    @Test("call.dtmf from the caller goes to the SIP party's leg as RFC 4733 events, once established")
    func dtmf() {
        var world = offeredPhoneCall()
        world.perform(world.registry.handleRequest(.callDTMF(.init(requestID: "d1", callID: id, digits: "1")), from: alice, now: world.now))
        #expect(world.log(alice).last == "error:invalid_state")
        world = established()
        world.perform(world.registry.handleRequest(.callDTMF(.init(requestID: "d2", callID: id, digits: "12#")), from: alice, now: world.now))
        #expect(world.log(alice).last == "result")
        #expect(world.mediaLog.last == .sendDTMF(callID: id, leg: .callee(.sip(phoneParty())), digits: "12#"))
        // The callee user's devices are not part of this call.
        world.perform(world.registry.handleRequest(.callDTMF(.init(requestID: "d3", callID: id, digits: "1")), from: bob1, now: world.now))
        #expect(world.log(bob1) == ["error:call_not_found"])
    }

    @Test("Digits from the far side (SIP INFO or RFC 4733 on its leg) reach the caller as call.dtmf, once established; the caller's own are not echoed")
    func dtmfFromTheFarSide() throws {
        var world = offeredPhoneCall()
        report(&world, .dtmf(digits: "5"))
        #expect(!world.log(alice).contains("call.dtmf"))
        world = established()
        report(&world, .dtmf(digits: "5"))
        world.media(.dtmfReceived(.callee(.sip(phoneParty())), digits: "#"), id)
        world.media(.dtmfReceived(.caller, digits: "9"), id)
        let events = (world.inbox[alice] ?? []).compactMap { message -> String? in
            guard case .callDTMFReceived(let dtmf) = message else { return nil }
            #expect(dtmf.callID == id && dtmf.time == world.now.unixMilliseconds)
            return dtmf.digits
        }
        #expect(events == ["5", "#"])
    }

    @Test("The far side's x- headers of its 18x and 2xx reach the caller on call.ringing and call.answered")
    func responseHeadersReachTheCaller() throws {
        var world = offeredPhoneCall()
        report(&world, .ringing(earlySDP: nil, headers: ["x-queue": "3"]))
        world.media(.legConnected(.caller), id)
        report(&world, .answered(sdp: Self.final, headers: ["x-agent": "42"]))
        var ringing: [String: String]?, answered: [String: String]?
        for message in world.inbox[alice] ?? [] {
            if case .callRinging(let event) = message { ringing = event.headers }
            if case .callAnswered(let event) = message { answered = event.headers }
        }
        #expect(ringing == ["x-queue": "3"])
        #expect(answered == ["x-queue": "3", "x-agent": "42"])
    }

    @Test("The record keeps the INVITE's Call-ID and the final status: 200 when answered, the failure's otherwise")
    func recordKeepsTheSIPCallIDAndStatus() throws {
        var world = offeredPhoneCall()
        report(&world, .placed(sipCallID: "abc@gw"))
        #expect(world.registry.record(of: id)?.sipCallID == "abc@gw")
        #expect(world.registry.record(of: id)?.sipStatus == nil)
        world.media(.legConnected(.caller), id)
        report(&world, .answered(sdp: Self.final))
        #expect(world.registry.record(of: id)?.sipStatus == 200)

        var busy = offeredPhoneCall()
        report(&busy, .placed(sipCallID: "def@gw"))
        report(&busy, .failed(status: 486, reason: "Busy Here"))
        let ended = try #require(busy.records.last { $0.callID == id })
        #expect(ended.sipCallID == "def@gw" && ended.sipStatus == 486 && ended.state == .ended)
        let json = String(decoding: try JSONEncoder().encode(ended), as: UTF8.self)
        #expect(json.contains(#""sipCallId":"def@gw""#) && json.contains(#""sipStatus":486"#))
    }

    // MARK: SIP addresses, routing and records

    @Test("A SIP address: the router's headers go on the INVITE, the record names the address; user@domain is accepted")
    func sipAddress() throws {
        for address in ["sip:bob@pbx.example.com", "bob@pbx.example.com:5070;transport=tcp"] {
            var world = world()
            start(&world, to: .sip(address), headers: ["X-Tenant": "7"])
            let party = SIPParty(callID: id, destination: .uri(address))
            #expect(told(world, party) == ["offered"])
            guard case .offered(let offer) = try #require(world.sipLog.first).notification else { return }
            #expect(offer.headers == ["X-Tenant": "7"])
            #expect(offer.cli == nil)
            let record = try #require(world.records.last)
            #expect(record.direction == .appToSIP)
            #expect(record.callee == .sip(address))
            #expect(record.direction.fits(caller: record.caller, callee: record.callee))
            report(&world, .answered(sdp: Self.final), party: party)
            world.media(.legConnected(.caller), id)
            world.media(.legConnected(.callee(.sip(party))), id)
            #expect(world.registry.record(of: id)?.state == .established)
        }
    }

    @Test("A phone call's record: direction appToPhone, the number as callee, JSON spelling")
    func phoneRecord() throws {
        let world = offeredPhoneCall()
        let record = try #require(world.records.last)
        #expect(record.direction == .appToPhone)
        #expect(record.callee == .phone(Self.number))
        #expect(record.direction.fits(caller: record.caller, callee: record.callee))
        #expect(CallDirection(rawValue: "appToSip") == .appToSIP)
        #expect(CallDirection(fromUserTo: .conference) == .appToConference)
    }

    @Test("A router's late dialSIP decision places the call like one given at once, with the decision's headers")
    func lateDecision() throws {
        var world = world(router: LateRouter())
        start(&world, to: .sip("sip:bob@pbx.example.com"), headers: ["X-A": "1"])
        #expect(world.log(alice) == ["result"])
        world.route(id, .dialSIP(uri: "sip:bob@pbx.example.com", headers: ["X-B": "2"]))
        let party = SIPParty(callID: id, destination: .uri("sip:bob@pbx.example.com"))
        #expect(world.log(alice) == ["result", "call.media", "call.progress"])
        guard case .offered(let offer) = try #require(world.sipLog.first).notification else { return }
        #expect(offer.headers == ["X-B": "2"])
        #expect(world.sipLog.first?.party == party)
        // The record keeps call.start's headers.
        #expect(world.records.last?.headers == ["X-A": "1"])
    }

    @Test("A phone decision without a CLI: refused at once (bad_request, field cli), or ended when it comes late; nothing is dialled")
    func missingCLI() throws {
        var world = world()
        start(&world, to: .phone(Self.number))
        guard case .error(let error) = try #require(world.inbox[alice]?.last) else { Issue.record("no error"); return }
        #expect(error.code == .badRequest)
        #expect(error.field == "cli")
        #expect(error.message == "call \(id): a call to a phone number needs a CLI: give cli in call.start, or set the application's default CLI")
        #expect(world.records.isEmpty && world.mediaLog.isEmpty)

        var late = self.world(router: LateRouter())
        start(&late, to: .phone(Self.number))
        late.route(id, .dialNumber(PhoneRoute(number: Self.number)))
        #expect(late.ended(alice)?.error?.code == .badRequest)
        #expect(late.mediaLog.isEmpty && late.sipLog.isEmpty)
    }

    @Test("A routing policy that routes no phone numbers or SIP addresses rejects them: destination_unavailable")
    func noGateway() throws {
        for to: SignalingMessage.Address in [.phone(Self.number), .sip("sip:bob@pbx.example.com")] {
            var world = world(router: PresenceRouter(sip: .noGateway))
            start(&world, to: to, cli: to.kind == .phone ? Self.cli : nil)
            #expect(world.log(alice) == ["result", "call.ended:error"])
            #expect(world.ended(alice)?.error?.code == .destinationUnavailable)
            #expect(world.mediaLog.isEmpty && world.sipLog.isEmpty)
        }
        // A policy may fill in the application's default CLI and pick a trunk.
        let policy = SIPRoutingPolicy(
            phone: { number, request in PhoneRoute(number: number, trunk: "carrier-a", callerID: request.cli ?? "+4631000000") },
            sip: { address, _ in address.hasSuffix("@pbx.example.com") })
        var world = world(router: PresenceRouter(sip: policy))
        start(&world, to: .phone(Self.number))
        let party = SIPParty(callID: id, destination: .phone(PhoneRoute(number: Self.number, trunk: "carrier-a", callerID: "+4631000000")))
        #expect(told(world, party) == ["offered"])
        #expect(party.cli == "+4631000000")
        #expect(party.description == "phone +46701234567 via carrier-a")
    }

    @Test("call.start's cli and destination are checked: cli only toward phone numbers and E.164; x- headers only toward SIP addresses")
    func requestChecks() throws {
        func refusal(_ to: SignalingMessage.Address, cli: String? = nil, headers: [String: String] = [:],
                     configuration: CallConfiguration = CallSIPTests.dialling()) throws -> SignalingMessage.ErrorReply? {
            var world = world(configuration: configuration)
            start(&world, to: to, cli: cli, headers: headers)
            guard case .error(let error)? = world.inbox[alice]?.last else { return nil }
            #expect(world.records.isEmpty)
            return error
        }
        let userWithCLI = try #require(try refusal(.user("bob"), cli: Self.cli))
        #expect(userWithCLI.code == .badRequest && userWithCLI.field == "cli")
        #expect(userWithCLI.message == "call \(id): cli is only for calls to phone numbers")
        let badCLI = try #require(try refusal(.phone(Self.number), cli: "0812345678"))
        #expect(badCLI.field == "cli")
        #expect(badCLI.message == "call \(id): cli must be an E.164 number: '+' then 2 to 15 digits, the first not 0")
        let badNumber = try #require(try refusal(.phone("46701234567"), cli: Self.cli))
        #expect(badNumber.code == .badRequest && badNumber.field == "to.address")
        let badSIP = try #require(try refusal(.sip("bob@")))
        #expect(badSIP.field == "to.address")
        #expect(badSIP.message == "call \(id): sip address must name a domain after '@'")
        let header = try #require(try refusal(.sip("sip:bob@pbx.example.com"), headers: ["X-Ok": "1", "topic": "billing"]))
        #expect(header.code == .badRequest && header.field == "headers")
        #expect(header.message == "call \(id): header topic: a call to a SIP address carries only x- headers (they go on its INVITE)")
        #expect(try refusal(.sip("sip:bob@pbx.example.com"), headers: ["x-lower": "1", "X-Upper": "2"]) == nil)
        // With dialling off the same request is refused not_implemented, as before dialling existed.
        let off = try #require(try refusal(.sip("sip:bob@pbx.example.com"), headers: ["topic": "billing"], configuration: CallConfiguration()))
        #expect(off.code == .notImplemented)
    }

    @Test("With SIP dialling off (the default) phone and SIP destinations are refused exactly as before", arguments: [
        SignalingMessage.Address.phone(number), .sip("sip:bob@pbx.example.com"), .sip("bob@pbx.example.com"),
    ])
    func diallingOff(to: SignalingMessage.Address) throws {
        var world = world(configuration: CallConfiguration())
        #expect(!world.registry.configuration.sipDialling)
        start(&world, to: to, cli: to.kind == .phone ? Self.cli : nil)
        guard case .error(let error) = try #require(world.inbox[alice]?.last) else { Issue.record("no error"); return }
        #expect(error.code == .notImplemented)
        #expect(error.field == "to.kind")
        #expect(error.message == "call \(id): this server places no calls to \(to.kind.rawValue) addresses: it has no SIP gateway configured (parleyd --sip-listen)")
        #expect(world.records.isEmpty && world.mediaLog.isEmpty && world.sipLog.isEmpty)
        #expect(world.registry.activeCalls.isEmpty)
        // Rooms are reached with dialling off too.
        #expect(RoutingDecision.joinRoom("standup").refusedKind(sipDialling: false) == nil)
        #expect(RoutingDecision.dialSIP(uri: "sip:a@b", headers: [:]).refusedKind(sipDialling: true) == nil)
        #expect(RoutingDecision.dialSIP(uri: "sip:a@b", headers: [:]).refusedKind(sipDialling: false) == .sip)
    }

    // MARK: Helpers

    /// A phone call answered by the SIP side and established.
    func established(configuration: CallConfiguration = CallSIPTests.dialling()) -> CallWorld {
        var world = offeredPhoneCall(configuration: configuration)
        report(&world, .ringing(earlySDP: nil))
        report(&world, .answered(sdp: Self.final))
        world.media(.legConnected(.caller), id)
        world.media(.legConnected(.callee(.sip(phoneParty()))), id)
        #expect(world.registry.record(of: id)?.state == .established)
        return world
    }
}
