import ParleyCallModel
import ParleyCallCore
import ParleySignaling
import ParleyTestSupport
import Testing

/// Per-application dialling settings in the registry (docs/calls.md, "Dialling policy"),
/// in virtual time: each refusal (nothing created, nothing dialled, the refusal kept for
/// parleyd's metrics), the default CLI, the concurrent cap freed by every way a call ends,
/// the per-minute window sliding, and the maximum duration.
@Suite("Dialling policy per application")
struct DiallingPolicyTests {
    let alice = CallWorld.device("alice", "a1")
    static let number = "+46701234567"
    static let cli = "+46812345678"
    static let answerSDP = "v=0\r\no=carrier 1 2 IN IP4 198.51.100.7\r\ns=-\r\nt=0 0\r\nm=audio 30002 RTP/AVP 0 101\r\nc=IN IP4 198.51.100.7\r\n"

    /// A registry that dials (`sipDialling`), with the dialling policy on and `settings`
    /// for the test application (none: the defaults).
    func world(_ settings: DiallingSettings? = DiallingSettings(allowedNumberPrefixes: ["+46"]),
               configuration: CallConfiguration = CallConfiguration(), router: any CallRouter = PresenceRouter()) -> CallWorld {
        var configuration = configuration
        configuration.sipDialling = true
        var world = CallWorld(configuration: configuration, router: router)
        world.registry.enforceDiallingSettings(settings.map { [CallWorld.app: $0] } ?? [:])
        world.connect(alice)
        return world
    }

    func callID(_ index: Int) -> String {
        let hex = String(index, radix: 16)
        return "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex
    }

    func start(_ world: inout CallWorld, _ callID: String, to: SignalingMessage.Address = .phone(number), cli: String? = cli) {
        let start = SignalingMessage.CallStart(requestID: world.nextRequestID(), callID: callID, to: to, sdp: CallWorld.callerOffer, cli: cli)
        world.perform(world.registry.handleRequest(.callStart(start), from: alice, now: world.now))
    }

    /// The error reply to the last request, if it was one.
    func lastError(_ world: CallWorld) -> SignalingMessage.ErrorReply? {
        if case .error(let error)? = world.inbox[alice]?.last { return error }
        return nil
    }

    func phoneParty(_ callID: String, number: String = number, cli: String = cli) -> SIPParty {
        SIPParty(callID: callID, destination: .phone(PhoneRoute(number: number, callerID: cli)))
    }

    func phoneCallsInProgress(_ world: CallWorld) -> Int {
        world.registry.dialling.phoneCallsInProgress(of: CallWorld.app)
    }

    /// Expects call.start of `callID` to have been refused with `code` and nothing made.
    func expectRefused(_ world: inout CallWorld, _ callID: String, code: SignalingErrorCode, field: String?, reason: DiallingRefusal.Reason,
                       messageContains text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let error = lastError(world)
        #expect(error?.code == code, sourceLocation: sourceLocation)
        #expect(error?.field == field, sourceLocation: sourceLocation)
        #expect(error?.message.contains(text) == true, "\(String(describing: error?.message))", sourceLocation: sourceLocation)
        #expect(world.registry.record(of: callID) == nil, "a refused call.start creates no call", sourceLocation: sourceLocation)
        #expect(!world.records.contains { $0.callID == callID }, "and no record", sourceLocation: sourceLocation)
        #expect(!world.mediaLog.contains { String(describing: $0).contains(callID) }, "and no leg: nothing is dialled",
                sourceLocation: sourceLocation)
        #expect(!world.sipLog.contains { $0.party.callID == callID }, sourceLocation: sourceLocation)
        let refusals = world.registry.takeDiallingRefusals()
        #expect(refusals.map(\.reason) == [reason], sourceLocation: sourceLocation)
        #expect(refusals.first?.callID == callID, sourceLocation: sourceLocation)
        #expect(refusals.first?.applicationKey == CallWorld.app, sourceLocation: sourceLocation)
    }

    // MARK: Where an application may call

    @Test("A number no allowed prefix matches: destination_not_allowed, nothing created or dialled")
    func numberNotAllowed() {
        var world = world(DiallingSettings(allowedNumberPrefixes: ["+4631", "+47"]))
        start(&world, callID(1))
        expectRefused(&world, callID(1), code: .destinationNotAllowed, field: "to.address", reason: .numberNotAllowed,
                      messageContains: "no allowed prefix of its dialling settings matches it")
        // A matching prefix is dialled.
        start(&world, callID(2), to: .phone("+46311234567"))
        #expect(world.registry.record(of: callID(2))?.state == .progressing)
        #expect(world.registry.takeDiallingRefusals().isEmpty)
    }

    @Test("An application without settings (the defaults) calls no phone number and no SIP address")
    func defaultsDialNothing() {
        var world = world(nil)
        start(&world, callID(1))
        expectRefused(&world, callID(1), code: .destinationNotAllowed, field: "to.address", reason: .numberNotAllowed,
                      messageContains: "may not call phone numbers")
        start(&world, callID(2), to: .sip("bob@pbx.example.com"), cli: nil)
        expectRefused(&world, callID(2), code: .destinationNotAllowed, field: "to.address", reason: .sipNotAllowed,
                      messageContains: "may not call SIP addresses")
        // Calls between the application's users are not the policy's business.
        world.connect(CallWorld.device("bob", "b1"))
        world.call(from: alice, to: "bob", callID: callID(3))
        #expect(world.registry.record(of: callID(3)) != nil)
    }

    @Test("SIP addresses only where the application allows them; then placed with the maximum duration")
    func sipAddresses() {
        var world = world(DiallingSettings(allowsSIPAddresses: true))
        start(&world, callID(1), to: .sip("bob@pbx.example.com"), cli: nil)
        #expect(world.registry.record(of: callID(1))?.state == .progressing)
        #expect(world.sipLog.map(\.party) == [SIPParty(callID: callID(1), destination: .uri("bob@pbx.example.com"))])
        // SIP calls do not count against the phone limits.
        #expect(phoneCallsInProgress(world) == 0)
    }

    // MARK: The CLI

    @Test("No CLI in call.start and no default: bad_request on cli; the default fills in; call.start's wins")
    func callingLineIdentity() throws {
        var world = world()
        start(&world, callID(1), cli: nil)
        expectRefused(&world, callID(1), code: .badRequest, field: "cli", reason: .noCLI, messageContains: "needs a CLI")

        world.registry.setDiallingSettings(DiallingSettings(defaultCLI: "+4631999000", allowedNumberPrefixes: ["+46"]),
                                           forApplication: CallWorld.app)
        start(&world, callID(2), cli: nil)
        #expect(world.sipLog.last?.party == phoneParty(callID(2), cli: "+4631999000"))
        guard case .offered(let offer)? = world.sipLog.last?.notification else { throw TestFailure("not offered") }
        #expect(offer.cli == "+4631999000")

        start(&world, callID(3), cli: Self.cli)
        #expect(world.sipLog.last?.party == phoneParty(callID(3), cli: Self.cli))
    }

    // MARK: How many

    @Test("At maxConcurrentPhoneCalls: too_many_calls naming the limit; an ended call frees its place")
    func concurrentCap() {
        var world = world(DiallingSettings(allowedNumberPrefixes: ["+46"], maxConcurrentPhoneCalls: 2))
        start(&world, callID(1))
        start(&world, callID(2))
        #expect(phoneCallsInProgress(world) == 2)
        start(&world, callID(3))
        expectRefused(&world, callID(3), code: .tooManyCalls, field: nil, reason: .concurrentLimit,
                      messageContains: "2 calls to phone numbers in progress, the most its dialling settings allow (maxConcurrentPhoneCalls)")
        world.hangup(alice, callID(1))
        #expect(phoneCallsInProgress(world) == 1)
        start(&world, callID(4))
        #expect(world.registry.record(of: callID(4)) != nil)
        // Refused calls never counted.
        #expect(phoneCallsInProgress(world) == 2)
    }

    @Test("maxPhoneCallsPerMinute over a sliding 60 s window: a call frees its slot exactly 60 s after it was placed")
    func perMinuteWindowSlides() {
        var configuration = CallConfiguration()
        configuration.maxCallsPerUser = 100
        var world = world(DiallingSettings(allowedNumberPrefixes: ["+46"], maxPhoneCallsPerMinute: 3), configuration: configuration)
        let t0 = world.now.instant
        start(&world, callID(1))
        start(&world, callID(2))
        world.advance(by: .seconds(30))
        start(&world, callID(3))
        // Hung up at once: ending a call does not give its slot back.
        for index in 1...3 { world.hangup(alice, callID(index)) }
        #expect(phoneCallsInProgress(world) == 0)
        #expect(world.registry.dialling.phoneCallsInLastMinute(of: CallWorld.app, at: world.now.instant) == 3)

        world.advance(by: .milliseconds(29_999))       // t0 + 59.999 s
        start(&world, callID(4))
        expectRefused(&world, callID(4), code: .tooManyCalls, field: nil, reason: .perMinuteLimit,
                      messageContains: "placed 3 calls to phone numbers in the last minute, the most its dialling settings allow (maxPhoneCallsPerMinute)")

        world.advance(by: .milliseconds(1))            // t0 + 60 s: the first two slots are free
        #expect(world.now.instant == t0.advanced(by: .seconds(60)))
        start(&world, callID(5))
        start(&world, callID(6))
        #expect(world.registry.record(of: callID(5)) != nil && world.registry.record(of: callID(6)) != nil)
        start(&world, callID(7))
        expectRefused(&world, callID(7), code: .tooManyCalls, field: nil, reason: .perMinuteLimit, messageContains: "placed 3 calls")

        world.advance(by: .seconds(30))                // t0 + 90 s: the third slot is free
        start(&world, callID(8))
        #expect(world.registry.record(of: callID(8)) != nil)
        start(&world, callID(9))
        expectRefused(&world, callID(9), code: .tooManyCalls, field: nil, reason: .perMinuteLimit, messageContains: "placed 3 calls")
    }

    @Test("A limit of 0 refuses every phone call; the numbers of the message are the application's")
    func zeroLimits() {
        var world = world(DiallingSettings(allowedNumberPrefixes: ["+46"], maxConcurrentPhoneCalls: 0))
        start(&world, callID(1))
        expectRefused(&world, callID(1), code: .tooManyCalls, field: nil, reason: .concurrentLimit, messageContains: "has 0 calls")
        world.registry.setDiallingSettings(DiallingSettings(allowedNumberPrefixes: ["+46"], maxPhoneCallsPerMinute: 0),
                                           forApplication: CallWorld.app)
        start(&world, callID(2))
        expectRefused(&world, callID(2), code: .tooManyCalls, field: nil, reason: .perMinuteLimit, messageContains: "placed 0 calls")
    }

    @Test("The limits are per application: another application's calls do not use them")
    func perApplication() {
        var world = world(DiallingSettings(allowedNumberPrefixes: ["+46"], maxConcurrentPhoneCalls: 1))
        let other = Device(user: AppUser(applicationKey: "other-app", userID: "olga"), deviceID: "o1")
        world.registry.setDiallingSettings(DiallingSettings(allowedNumberPrefixes: ["+46"], maxConcurrentPhoneCalls: 1),
                                           forApplication: "other-app")
        world.connect(other)
        start(&world, callID(1))
        let request = SignalingMessage.CallStart(requestID: "o", callID: callID(2), to: .phone(Self.number), sdp: CallWorld.callerOffer, cli: Self.cli)
        world.perform(world.registry.handleRequest(.callStart(request), from: other, now: world.now))
        #expect(world.registry.record(of: callID(2)) != nil)
        #expect(world.registry.dialling.phoneCallsInProgress(of: "other-app") == 1)
        #expect(phoneCallsInProgress(world) == 1)
    }

    // MARK: Every way a call ends frees its place

    enum Ending: String, CaseIterable, CustomTestStringConvertible {
        case callerHangsUpWhileRinging, callerHangsUpAfterAnswer, restHangUp, sipBusy, sipByeAfterAnswer, sipFailureAfterAnswer,
             ringTimeout, maximumDuration, serverMaximumLength, callerLegFails, sipLegFails, mediaSetupTimeout, legInactive,
             callerGraceRunsOut, callerReconnectsWithoutResume, endAll
        var testDescription: String { rawValue }
    }

    @Test("Every way a phone call ends frees its place in the concurrent count", arguments: Ending.allCases)
    func everyEndingFreesThePlace(_ ending: Ending) throws {
        var configuration = CallConfiguration()
        configuration.maximumCallLength = .seconds(600)
        var world = world(DiallingSettings(allowedNumberPrefixes: ["+46"], maxConcurrentPhoneCalls: 1, maxCallDurationSeconds: 300),
                          configuration: configuration)
        let id = callID(1)
        let party = phoneParty(id)
        start(&world, id)
        #expect(phoneCallsInProgress(world) == 1)
        func answer(_ world: inout CallWorld) {
            world.media(.legConnected(.caller), id)
            world.perform(world.registry.handleSIP(.answered(sdp: Self.answerSDP), from: party, now: world.now))
            world.media(.legConnected(.callee(.sip(party))), id)
            #expect(world.registry.record(of: id)?.state == .established)
        }
        switch ending {
        case .callerHangsUpWhileRinging: world.hangup(alice, id)
        case .callerHangsUpAfterAnswer: answer(&world); world.hangup(alice, id)
        case .restHangUp: world.perform(try world.registry.hangUp(callID: id, now: world.now))
        case .sipBusy: world.perform(world.registry.handleSIP(.failed(status: 486, reason: "Busy Here"), from: party, now: world.now))
        case .sipByeAfterAnswer: answer(&world); world.perform(world.registry.handleSIP(.hungUp, from: party, now: world.now))
        case .sipFailureAfterAnswer:
            answer(&world)
            world.perform(world.registry.handleSIP(.failed(status: 500, reason: "Server Error"), from: party, now: world.now))
        case .ringTimeout: world.advance(by: configuration.ringTimeout)
        case .maximumDuration: answer(&world); world.advance(by: .seconds(300))
        case .serverMaximumLength:
            world.registry.setDiallingSettings(DiallingSettings(allowedNumberPrefixes: ["+46"], maxConcurrentPhoneCalls: 1,
                                                                maxCallDurationSeconds: 604_800), forApplication: CallWorld.app)
            world.hangup(alice, id)
            start(&world, callID(2))
            #expect(phoneCallsInProgress(world) == 1)
            world.media(.legConnected(.caller), callID(2))
            let second = phoneParty(callID(2))
            world.perform(world.registry.handleSIP(.answered(sdp: Self.answerSDP), from: second, now: world.now))
            world.media(.legConnected(.callee(.sip(second))), callID(2))
            world.advance(by: .seconds(600))
            #expect(world.ended(alice)?.cause == .canceled)
            #expect(world.records.last?.endCause == .timeout)
        case .callerLegFails: world.media(.legFailed(.caller, reason: "ice failed"), id)
        case .sipLegFails: world.media(.legFailed(.callee(.sip(party)), reason: "no port"), id)
        case .mediaSetupTimeout:
            world.perform(world.registry.handleSIP(.answered(sdp: Self.answerSDP), from: party, now: world.now))
            world.advance(by: configuration.mediaSetupTimeout)
        case .legInactive: answer(&world); world.media(.legInactive(.callee(.sip(party))), id)
        case .callerGraceRunsOut: answer(&world); world.disconnect(alice); world.advance(by: configuration.reconnectGrace)
        case .callerReconnectsWithoutResume: answer(&world); world.connect(alice, resumed: false)
        case .endAll: world.perform(world.registry.endAll(.init(code: .internalError, message: "server shutting down"), now: world.now))
        }
        #expect(world.registry.activeCalls.isEmpty, "\(world.log(alice))")
        #expect(phoneCallsInProgress(world) == 0)
        // The place is free: the next call is dialled.
        start(&world, callID(3))
        #expect(world.registry.record(of: callID(3)) != nil, "\(world.log(alice))")
    }

    // MARK: The maximum duration

    @Test("A phone call ends with timeout at the application's maximum duration, counted from when it was dialled")
    func maximumDuration() throws {
        var world = world(DiallingSettings(allowedNumberPrefixes: ["+46"], maxCallDurationSeconds: 120))
        let id = callID(1)
        let party = phoneParty(id)
        start(&world, id)
        world.advance(by: .seconds(10))
        world.media(.legConnected(.caller), id)
        world.perform(world.registry.handleSIP(.answered(sdp: Self.answerSDP), from: party, now: world.now))
        world.media(.legConnected(.callee(.sip(party))), id)
        world.advance(by: .milliseconds(109_999))
        #expect(world.registry.record(of: id)?.state == .established)
        world.advance(by: .milliseconds(1))
        let ended = try #require(world.ended(alice))
        #expect(ended.cause == .timeout)
        guard case .ended(_, let cause, _, _)? = world.sipLog.last?.notification else { throw TestFailure("the SIP party was not told") }
        #expect(cause == .timeout, "the SIP user agent sends BYE")
        #expect(world.mediaLog.last == .closeAll(callID: id))
    }

    /// A configuration whose ring timeout outlasts the durations under test.
    static func longRing(maximumCallLength: Duration = .seconds(4 * 3600)) -> CallConfiguration {
        var configuration = CallConfiguration()
        configuration.ringTimeout = .seconds(3600)
        configuration.maximumCallLength = maximumCallLength
        return configuration
    }

    @Test("A SIP address call is capped too, ringing included: the cap runs from when the call is dialled")
    func sipCallCappedWhileRinging() {
        var world = world(DiallingSettings(maxCallDurationSeconds: 90, allowsSIPAddresses: true), configuration: Self.longRing())
        start(&world, callID(1), to: .sip("bob@pbx.example.com"), cli: nil)
        world.perform(world.registry.handleSIP(.ringing(earlySDP: nil), from: SIPParty(callID: callID(1), destination: .uri("bob@pbx.example.com")),
                                               now: world.now))
        world.advance(by: .milliseconds(89_999))
        #expect(world.registry.record(of: callID(1))?.state == .ringing)
        world.advance(by: .milliseconds(1))
        #expect(world.ended(alice)?.cause == .timeout)
    }

    @Test("The server's maximum call length still ends the call when it is the shorter")
    func serverMaximumWhenShorter() {
        var world = world(DiallingSettings(allowedNumberPrefixes: ["+46"], maxCallDurationSeconds: 120),
                          configuration: Self.longRing(maximumCallLength: .seconds(60)))
        start(&world, callID(1))
        world.advance(by: .milliseconds(59_999))
        #expect(world.registry.record(of: callID(1)) != nil)
        world.advance(by: .milliseconds(1))
        #expect(world.ended(alice)?.cause == .timeout)
    }

    // MARK: A router that answers later

    @Test("A late decision is checked like one given at once: a refused one ends the call with the refusal, nothing dialled")
    func lateDecisionRefused() throws {
        var world = world(DiallingSettings(allowedNumberPrefixes: ["+47"]), router: LateRouter())
        start(&world, callID(1))
        #expect(world.log(alice) == ["result"])
        world.advance(by: .seconds(2))
        world.route(callID(1), .dialNumber(PhoneRoute(number: Self.number, callerID: Self.cli)))
        let ended = try #require(world.ended(alice))
        #expect(ended.cause == .error)
        #expect(ended.error?.code == .destinationNotAllowed)
        #expect(world.mediaLog.isEmpty, "no leg, no INVITE")
        #expect(world.sipLog.isEmpty)
        #expect(world.registry.takeDiallingRefusals().map(\.reason) == [.numberNotAllowed])
    }

    @Test("A late decision admitted: the default CLI fills in, the call counts, and its cap runs from the decision")
    func lateDecisionAdmitted() throws {
        var world = world(DiallingSettings(defaultCLI: "+4631999000", allowedNumberPrefixes: ["+46"], maxConcurrentPhoneCalls: 1,
                                           maxCallDurationSeconds: 60),
                          configuration: Self.longRing(), router: LateRouter())
        start(&world, callID(1), cli: nil)
        world.advance(by: .seconds(5))
        world.route(callID(1), .dialNumber(PhoneRoute(number: Self.number)))
        #expect(world.sipLog.last?.party == phoneParty(callID(1), cli: "+4631999000"))
        #expect(phoneCallsInProgress(world) == 1)
        // A second decision for a routed call is ignored and counts nothing.
        world.route(callID(1), .dialNumber(PhoneRoute(number: Self.number)))
        #expect(phoneCallsInProgress(world) == 1)
        world.advance(by: .milliseconds(59_999))
        #expect(world.registry.record(of: callID(1)) != nil)
        world.advance(by: .milliseconds(1))
        #expect(world.ended(alice)?.cause == .timeout)
        #expect(phoneCallsInProgress(world) == 0)
    }

    @Test("A call still routing when it ends was never dialled and counts nothing")
    func routingTimeout() {
        var world = world(router: LateRouter())
        start(&world, callID(1))
        #expect(phoneCallsInProgress(world) == 0)
        world.advance(by: .seconds(10))
        #expect(world.ended(alice)?.error?.code == .destinationUnavailable)
        world.route(callID(1), .dialNumber(PhoneRoute(number: Self.number, callerID: Self.cli)))
        #expect(phoneCallsInProgress(world) == 0)
        #expect(world.registry.takeDiallingRefusals().isEmpty)
    }

    // MARK: What stays as it was

    @Test("Without SIP dialling a phone call is not_implemented whatever the settings, and is no dialling refusal")
    func sipDiallingOffStaysNotImplemented() {
        var world = CallWorld()
        world.registry.enforceDiallingSettings([CallWorld.app: DiallingSettings(allowedNumberPrefixes: ["+46"])])
        world.connect(alice)
        start(&world, callID(1))
        #expect(lastError(world)?.code == .notImplemented)
        #expect(world.registry.takeDiallingRefusals().isEmpty)
    }

    @Test("A registry never given settings places phone calls as its router says (the policy is off)")
    func offUntilEnforced() {
        var configuration = CallConfiguration()
        configuration.sipDialling = true
        var world = CallWorld(configuration: configuration)
        world.connect(alice)
        #expect(!world.registry.dialling.isEnforced)
        start(&world, callID(1), to: .phone("+19005550100"))
        #expect(world.registry.record(of: callID(1))?.state == .progressing)
        #expect(world.registry.takeDiallingRefusals().isEmpty)
    }

    @Test("Refusals wait for the shell, oldest first, at most maxPendingRefusals of them")
    func pendingRefusalsAreBounded() {
        var limiter = DiallingLimiter()
        limiter.enforce([:])
        let now = ContinuousClock.now
        for index in 0..<(DiallingLimiter.maxPendingRefusals + 5) {
            _ = limiter.admit(.dialSIP(uri: "sip:x@example.com", headers: [:]), applicationKey: "app", callID: "c\(index)", now: now)
        }
        let refusals = limiter.takeRefusals()
        #expect(refusals.count == DiallingLimiter.maxPendingRefusals)
        #expect(refusals.first?.callID == "c5")
        #expect(limiter.takeRefusals().isEmpty)
    }
}

/// `DiallingSettings`' own rules: the defaults and what a stored value may hold.
@Suite("Dialling settings")
struct DiallingSettingsTests {
    @Test("The defaults dial nothing and are valid")
    func defaults() {
        let settings = DiallingSettings()
        #expect(settings.defaultCLI == nil)
        #expect(settings.allowedNumberPrefixes.isEmpty)
        #expect(settings.maxConcurrentPhoneCalls == 10)
        #expect(settings.maxPhoneCallsPerMinute == 30)
        #expect(settings.maxCallDuration == .seconds(7200))
        #expect(!settings.allowsSIPAddresses)
        #expect(settings.problem == nil)
        #expect(!settings.allowsNumber("+46701234567"))
    }

    @Test("Prefixes match the start of the number only")
    func prefixes() {
        let settings = DiallingSettings(allowedNumberPrefixes: ["+46", "+1212"])
        #expect(settings.allowsNumber("+46701234567"))
        #expect(settings.allowsNumber("+12125550100"))
        #expect(!settings.allowsNumber("+12135550100"))
        #expect(!settings.allowsNumber("+4"))
        #expect(!settings.allowsNumber("0046701234567"))
    }

    @Test("Bad values are named", arguments: [
        (DiallingSettings(defaultCLI: "0701234567"), "default CLI \"0701234567\" is not an E.164 number"),
        (DiallingSettings(defaultCLI: "+0701234567"), "is not an E.164 number"),
        (DiallingSettings(defaultCLI: "+1234567890123456"), "is not an E.164 number"),
        (DiallingSettings(allowedNumberPrefixes: ["46"]), "prefix \"46\" is not a number prefix"),
        (DiallingSettings(allowedNumberPrefixes: ["+"]), "prefix \"+\" is not a number prefix"),
        (DiallingSettings(allowedNumberPrefixes: ["+4a"]), "is not a number prefix"),
        (DiallingSettings(allowedNumberPrefixes: ["+46", "+46"]), "prefix +46 is listed twice"),
        (DiallingSettings(allowedNumberPrefixes: (1...257).map { "+\($0)" }), "257 allowed prefixes exceeds the limit of 256"),
        (DiallingSettings(maxConcurrentPhoneCalls: -1), "maximum concurrent phone calls -1 is outside 0...100000"),
        (DiallingSettings(maxPhoneCallsPerMinute: 10_001), "maximum phone calls per minute 10001 is outside 0...10000"),
        (DiallingSettings(maxCallDurationSeconds: 0), "maximum call duration 0 s is outside 1...604800 s"),
    ])
    func problems(_ settings: DiallingSettings, _ expected: String) {
        #expect(settings.problem?.contains(expected) == true, "\(String(describing: settings.problem))")
    }

    @Test("Good values pass")
    func goodValues() {
        #expect(DiallingSettings(defaultCLI: "+46812345678", allowedNumberPrefixes: ["+4", "+123456789012345"],
                                 maxConcurrentPhoneCalls: 0, maxPhoneCallsPerMinute: 10_000, maxCallDurationSeconds: 604_800,
                                 allowsSIPAddresses: true).problem == nil)
    }
}
