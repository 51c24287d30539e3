import ParleyCallModel
import ParleyCallCore
import ParleySignaling
import Testing

/// Calls in over SIP bridged to a call out (docs/calls.md, "Bridged calls"): the caller
/// is a SIP party told through the inbound user agent, the callee a SIP party whose
/// INVITE goes out; each answer of the call out reaches the caller, each end crosses over.
@Suite("Calls in over SIP bridged to a call out")
struct CallSIPBridgeTests {
    let id = "7e3a9c51-2b4d-4f6e-8a1c-d5e6f7a8b9c0"
    static let callerNumber = "+46701234567"
    static let destination = "+4631555010"
    static let offer = "v=0\r\no=carrier 1 1 IN IP4 198.51.100.7\r\ns=-\r\nt=0 0\r\nm=audio 30000 RTP/AVP 8 0 101\r\nc=IN IP4 198.51.100.7\r\n"
    static let calleeSDP = "v=0\r\no=far 1 1 IN IP4 203.0.113.9\r\ns=-\r\nt=0 0\r\nm=audio 31000 RTP/AVP 8 101\r\nc=IN IP4 203.0.113.9\r\n"

    var phoneCaller: SIPParty { SIPParty(callID: id, destination: .phone(PhoneRoute(number: Self.callerNumber))) }
    var sipCaller: SIPParty { SIPParty(callID: id, destination: .uri("alice@pbx.example")) }

    /// The call out's party for a phone number presenting `cli`.
    func phoneCallee(_ number: String = destination, cli: String = callerNumber) -> SIPParty {
        SIPParty(callID: id, destination: .phone(PhoneRoute(number: number, callerID: cli)))
    }

    func world(sipDialling: Bool = true, settings: DiallingSettings? = nil) -> CallWorld {
        var configuration = CallConfiguration()
        configuration.sipDialling = sipDialling
        var world = CallWorld(configuration: configuration)
        if let settings { world.registry.enforceDiallingSettings([CallWorld.app: settings]) }
        return world
    }

    func start(_ world: inout CallWorld, from caller: SIPParty? = nil, to target: PartyAddress = .phone(destination),
               headers: [String: String] = [:], cli: String? = nil, maximumLength: Duration? = nil,
               ringTimeout: Duration? = nil) throws(CallingError) {
        world.perform(try world.registry.startInbound(
            callID: id, from: caller ?? phoneCaller, applicationKey: CallWorld.app, to: target, offer: Self.offer,
            headers: headers, cli: cli, maximumLength: maximumLength, ringTimeout: ringTimeout, now: world.now))
    }

    func report(_ world: inout CallWorld, _ event: SIPCallEvent, from party: SIPParty) {
        world.perform(world.registry.handleSIP(event, from: party, now: world.now))
    }

    /// What `party` was told, as short names.
    func told(_ world: CallWorld, _ party: SIPParty) -> [String] {
        world.sipLog.filter { $0.party == party }.map { entry in
            switch entry.notification {
            case .offered: "offered"
            case .answered: "answered"
            case .established: "established"
            case .ended(_, let cause, _, _): "ended:\(cause.rawValue)"
            case .mediaReady: "mediaReady"
            case .progress: "progress"
            case .ringing: "ringing"
            case .earlyMedia: "earlyMedia"
            case .dtmf(_, let digits, _): "dtmf:\(digits)"
            case .talking: "talking"
            case .held(_, let held, _, _): held ? "held" : "resumed"
            }
        }
    }

    func endedError(_ world: CallWorld, _ party: SIPParty) -> SignalingMessage.CallError? {
        for entry in world.sipLog where entry.party == party {
            if case .ended(_, _, let error, _) = entry.notification { return error }
        }
        return nil
    }

    // MARK: Placing the call out

    @Test("A phone call in routed to a number: the caller's leg answers its INVITE, then the call out is offered, presenting the caller's number")
    func phoneToPhoneOffersTheCallOut() throws {
        var world = world()
        try start(&world, headers: ["x-account": "42"])
        let callee = phoneCallee()
        #expect(world.mediaLog == [
            .answerSIPCaller(callID: id, offer: Self.offer, room: nil),
            .offerCallee(callID: id, party: .sip(callee)),
        ])
        #expect(told(world, phoneCaller) == ["mediaReady", "progress"])
        #expect(told(world, callee) == ["offered"])
        let offer = try #require(world.sipLog.compactMap { if case .offered(let offer) = $0.notification { offer } else { nil } }.first)
        #expect(offer.cli == Self.callerNumber)
        #expect(offer.from == .phone(Self.callerNumber))
        #expect(offer.headers == ["x-account": "42"])
        #expect(offer.sdp == CallWorld.anchorRTPOffer)
        let record = try #require(world.records.first)
        #expect(record.direction == .phoneToPhone)
        #expect(record.caller == .phone(Self.callerNumber) && record.callee == .phone(Self.destination))
        #expect(record.callerDeviceID == nil)
    }

    @Test("The CLI the rule or backend gives wins over the caller's number")
    func givenCLIWins() throws {
        var world = world()
        try start(&world, cli: "+4640123456")
        #expect(told(world, phoneCallee(cli: "+4640123456")) == ["offered"])
    }

    @Test("A SIP caller routed to a SIP address: direction sipToSip, the headers go on the call out's INVITE")
    func sipToSIP() throws {
        var world = world(settings: DiallingSettings(allowsSIPAddresses: true))
        try start(&world, from: sipCaller, to: .sip("bob@pbx.example"), headers: ["x-ticket": "7"])
        let callee = SIPParty(callID: id, destination: .uri("bob@pbx.example"))
        #expect(told(world, callee) == ["offered"])
        let offer = try #require(world.sipLog.compactMap { if case .offered(let offer) = $0.notification { offer } else { nil } }.first)
        #expect(offer.headers == ["x-ticket": "7"] && offer.cli == nil)
        #expect(world.records.first?.direction == .sipToSIP)
        #expect(world.records.first?.callee == .sip("bob@pbx.example"))
    }

    @Test("A phone caller to a SIP address is phoneToSip; a SIP caller to a number is sipToPhone and presents the application's default CLI")
    func mixedDirections() throws {
        var first = world(settings: DiallingSettings(allowsSIPAddresses: true))
        try start(&first, to: .sip("bob@pbx.example"))
        #expect(first.records.first?.direction == .phoneToSIP)

        var second = world(settings: DiallingSettings(defaultCLI: "+4631000000", allowedNumberPrefixes: ["+46"]))
        try start(&second, from: sipCaller)
        #expect(second.records.first?.direction == .sipToPhone)
        #expect(told(second, phoneCallee(cli: "+4631000000")) == ["offered"])
    }

    @Test("A SIP caller to a number without any CLI is refused and nothing is dialled")
    func sipCallerWithoutCLIIsRefused() throws {
        var world = world()
        try start(&world, from: sipCaller)
        #expect(world.mediaLog.isEmpty)
        #expect(told(world, sipCaller) == ["ended:error"])
        #expect(endedError(world, sipCaller)?.code == .badRequest)
    }

    @Test("The dialling settings refuse a number outside the allowed prefixes, and SIP addresses unless allowed: nothing starts")
    func diallingPolicyApplies() throws {
        var world = world(settings: DiallingSettings(allowedNumberPrefixes: ["+47"]))
        #expect(throws: CallingError.self) { try start(&world) }
        do {
            try start(&world)
        } catch {
            #expect(error.signalingCode == .destinationNotAllowed)
        }
        #expect(throws: CallingError.self) { try start(&world, to: .sip("bob@pbx.example")) }
        #expect(world.mediaLog.isEmpty && world.sipLog.isEmpty)
        #expect(world.registry.takeDiallingRefusals().map(\.reason) == [.numberNotAllowed, .numberNotAllowed, .sipNotAllowed])
    }

    @Test("Without SIP dialling a bridge is refused not_implemented")
    func noDialling() {
        var world = world(sipDialling: false)
        do {
            try start(&world)
            Issue.record("started")
        } catch {
            #expect(error.signalingCode == .notImplemented)
        }
    }

    @Test("A call routed back to the address it came from is refused, nothing dialled")
    func loopIsRefused() throws {
        var world = world(settings: DiallingSettings(allowsSIPAddresses: true))
        try start(&world, from: sipCaller, to: .sip("alice@pbx.example"))
        #expect(!world.mediaLog.contains { if case .offerCallee = $0 { true } else { false } })
        #expect(told(world, sipCaller) == ["ended:error"])
        #expect(endedError(world, sipCaller)?.code == .badRequest)
    }

    // MARK: Answers of the call out reach the caller

    @Test("180 rings the caller; 200 answers it and bridges; BYE from the callee sends BYE to the caller")
    func answeredThenCalleeHangsUp() throws {
        var world = world()
        try start(&world)
        let callee = phoneCallee()
        report(&world, .placed(sipCallID: "out-1@parley"), from: callee)
        report(&world, .ringing(earlySDP: nil), from: callee)
        #expect(told(world, phoneCaller) == ["mediaReady", "progress", "ringing"])
        report(&world, .answered(sdp: Self.calleeSDP), from: callee)
        #expect(told(world, phoneCaller).last == "answered")
        #expect(world.mediaLog.suffix(2) == [
            .acceptAnswer(callID: id, party: .sip(callee), answer: Self.calleeSDP), .bridge(callID: id, party: .sip(callee)),
        ])
        world.media(.legConnected(.caller), id)
        world.media(.legConnected(.callee(.sip(callee))), id)
        #expect(told(world, phoneCaller).last == "established")
        #expect(world.records.last?.state == .established)
        #expect(world.records.last?.sipCallID == "out-1@parley")

        report(&world, .hungUp, from: callee)
        #expect(told(world, phoneCaller).last == "ended:hungUp")
        #expect(told(world, callee).last == "ended:hungUp")
        #expect(world.records.last?.endCause == .hungUp)
        #expect(world.mediaLog.last == .closeAll(callID: id))
    }

    @Test("The caller's BYE after the answer ends the call: the call out gets BYE (ended after its answer)")
    func callerHangsUp() throws {
        var world = world()
        try start(&world)
        let callee = phoneCallee()
        report(&world, .answered(sdp: Self.calleeSDP), from: callee)
        report(&world, .hungUp, from: phoneCaller)
        #expect(told(world, callee) == ["offered", "answered", "ended:hungUp"])
        #expect(told(world, phoneCaller).last == "ended:hungUp")
    }

    @Test("A 183 with SDP: early media bridged at once and the caller told (its 183) before it rings; the 200 keeps that answer")
    func earlyMedia() throws {
        var world = world()
        try start(&world)
        let callee = phoneCallee()
        report(&world, .ringing(earlySDP: Self.calleeSDP), from: callee)
        #expect(told(world, phoneCaller) == ["mediaReady", "progress", "earlyMedia", "ringing"])
        #expect(world.mediaLog.suffix(2) == [
            .acceptAnswer(callID: id, party: .sip(callee), answer: Self.calleeSDP), .bridge(callID: id, party: .sip(callee)),
        ])
        let before = world.mediaLog.count
        report(&world, .ringing(earlySDP: Self.calleeSDP), from: callee)
        report(&world, .answered(sdp: nil), from: callee)
        #expect(world.mediaLog.count == before)
        #expect(told(world, phoneCaller).last == "answered")
        #expect(told(world, phoneCaller).filter { $0 == "earlyMedia" }.count == 1)
    }

    // MARK: Ends before the answer cross over

    @Test("Busy (486), decline (603) and busy everywhere (600) end the caller's call denied (its 486)")
    func busy() throws {
        for status in [486, 600, 603] {
            var world = world()
            try start(&world)
            report(&world, .failed(status: status, reason: "Busy"), from: phoneCallee())
            #expect(told(world, phoneCaller).last == "ended:denied")
            #expect(world.records.last?.sipStatus == status)
        }
    }

    @Test("No answer (480, 408) ends the caller's call noAnswer (its 480)")
    func noAnswer() throws {
        for status in [480, 408] {
            var world = world()
            try start(&world)
            report(&world, .failed(status: status, reason: "Unavailable"), from: phoneCallee())
            #expect(told(world, phoneCaller).last == "ended:noAnswer")
        }
    }

    @Test("The ring timeout cancels the call out and tells the caller timeout once it rang")
    func ringTimeout() throws {
        var world = world()
        try start(&world)
        let callee = phoneCallee()
        report(&world, .ringing(earlySDP: nil), from: callee)
        world.advance(by: CallConfiguration().ringTimeout)
        #expect(told(world, phoneCaller).last == "ended:timeout")
        #expect(told(world, callee).last == "ended:timeout")
    }

    @Test("A backend's dialTimeout ends the ringing sooner than the server's ring timeout; a longer one changes nothing")
    func dialTimeout() throws {
        var world = world()
        try start(&world, ringTimeout: .seconds(10))
        let callee = phoneCallee()
        report(&world, .ringing(earlySDP: nil), from: callee)
        world.advance(by: .seconds(9))
        #expect(told(world, phoneCaller).last == "ringing")
        world.advance(by: .seconds(1))
        #expect(told(world, phoneCaller).last == "ended:timeout")
        #expect(told(world, callee).last == "ended:timeout")

        var later = self.world()
        try start(&later, ringTimeout: CallConfiguration().ringTimeout + .seconds(60))
        later.advance(by: CallConfiguration().ringTimeout)
        #expect(told(later, phoneCaller).last == "ended:noAnswer")
    }

    @Test("The caller's CANCEL before the answer cancels the call out")
    func callerCancels() throws {
        var world = world()
        try start(&world)
        let callee = phoneCallee()
        report(&world, .ringing(earlySDP: nil), from: callee)
        report(&world, .hungUp, from: phoneCaller)
        #expect(told(world, callee) == ["offered", "ended:canceled"])
        #expect(told(world, phoneCaller).last == "ended:canceled")
        #expect(world.records.last?.endCause == .canceled)
    }

    @Test("Another failure of the call out reaches the caller as sip_error naming its status")
    func otherFailure() throws {
        var world = world()
        try start(&world)
        report(&world, .failed(status: 404, reason: "Not Found"), from: phoneCallee())
        let error = try #require(endedError(world, phoneCaller))
        #expect(error.code == .sipError)
        #expect(SIPCallEvent.status(of: error) == 404)
    }

    @Test("The call out's leg that cannot be made ends the call media_failed")
    func calleeLegFails() throws {
        var world = world()
        world.autoMedia = false
        try start(&world)
        world.media(.callerLegReady(sdp: CallWorld.anchorAnswer), id)
        world.media(.legFailed(.callee(.sip(phoneCallee())), reason: "no media port"), id)
        #expect(told(world, phoneCaller).last == "ended:error")
        #expect(endedError(world, phoneCaller)?.code == .mediaFailed)
    }

    @Test("A backend's maximum duration ends an answered bridge with timeout")
    func maximumLength() throws {
        var world = world()
        try start(&world, maximumLength: .seconds(30))
        let callee = phoneCallee()
        report(&world, .answered(sdp: Self.calleeSDP), from: callee)
        world.media(.legConnected(.caller), id)
        world.media(.legConnected(.callee(.sip(callee))), id)
        world.advance(by: .seconds(31))
        #expect(told(world, phoneCaller).last == "ended:timeout")
        #expect(told(world, callee).last == "ended:timeout")
    }

    @Test("DTMF by SIP INFO crosses a bridge as RFC 4733 events on the other leg, both ways")
    func dtmfAcrossABridge() throws {
        var world = world()
        try start(&world)
        let callee = phoneCallee()
        report(&world, .answered(sdp: Self.calleeSDP), from: callee)
        world.media(.legConnected(.caller), id)
        world.media(.legConnected(.callee(.sip(callee))), id)
        report(&world, .dtmf(digits: "5"), from: callee)
        #expect(world.mediaLog.last == .sendDTMF(callID: id, leg: .caller, digits: "5"))
        report(&world, .dtmf(digits: "#"), from: phoneCaller)
        #expect(world.mediaLog.last == .sendDTMF(callID: id, leg: .callee(.sip(callee)), digits: "#"))
    }

    // MARK: Values

    @Test("sip_error statuses read back; other errors have none")
    func statusOfError() {
        #expect(SIPCallEvent.status(of: SIPCallEvent.sipError(status: 503, reason: "Service Unavailable")) == 503)
        #expect(SIPCallEvent.status(of: SIPCallEvent.sipError(status: 488, reason: "")) == 488)
        #expect(SIPCallEvent.status(of: .init(code: .sipError, message: "SIP 5033 x")) == nil)
        #expect(SIPCallEvent.status(of: .init(code: .sipError, message: "SIP abc")) == nil)
        #expect(SIPCallEvent.status(of: .init(code: .mediaFailed, message: "SIP 503 x")) == nil)
    }

    @Test("Bridged directions join the kinds they name")
    func directions() {
        #expect(CallDirection(bridgedFrom: .phone, to: .phone) == .phoneToPhone)
        #expect(CallDirection(bridgedFrom: .phone, to: .sip) == .phoneToSIP)
        #expect(CallDirection(bridgedFrom: .sip, to: .phone) == .sipToPhone)
        #expect(CallDirection(bridgedFrom: .sip, to: .sip) == .sipToSIP)
        #expect(CallDirection(bridgedFrom: .user, to: .phone) == nil)
        #expect(CallDirection(bridgedFrom: .phone, to: .user) == nil)
        #expect(CallDirection.sipToPhone.fits(caller: .sip("a@b.example"), callee: .phone("+4631555010")))
        #expect(CallDirection.phoneToSIP.rawValue == "phoneToSip")
    }

    @Test("Number rules name a number or SIP address to bridge to, and write back as given")
    func numberRules() throws {
        let phone = try NumberRoute(parsing: "4631555000=app-1:number:4631555010")
        #expect(phone.target == .phone("+4631555010"))
        #expect(phone.description == "+4631555000=app-1:number:+4631555010")
        let sip = try NumberRoute(parsing: "+4631555000=app-1:sip:bob@pbx.example")
        #expect(sip.target == .sip("bob@pbx.example"))
        #expect(try NumberRoute(parsing: sip.description) == sip)
        #expect(throws: NumberRoute.ParseError.self) { try NumberRoute(parsing: "+4631555000=app-1:number:0800") }
        #expect(throws: NumberRoute.ParseError.self) { try NumberRoute(parsing: "+4631555000=app-1:sip:no spaces@x") }
        #expect(throws: NumberRoute.ParseError.self) { try NumberRoute(parsing: "+4631555000=app-1:sip:") }
    }
}
