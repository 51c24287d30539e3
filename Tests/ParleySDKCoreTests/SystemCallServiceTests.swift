import Foundation
@_spi(ParleyEngines) @testable import ParleySDKCore
import Testing

private let c1 = "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13"
private let c2 = "0d6b9f64-1e2a-4f8c-8b37-6a5c2e1f9d08"
/// Inside the fixtures' ring time.
private let during: Int64 = 1_764_421_210_000

/// The service's side of the client, recorded: what it asked, and when relative to the
/// provider's reports. Pushes are verified by the real verifier with the fixtures' key.
final class RecordingCallControl: SystemCallControl, @unchecked Sendable {
    // @unchecked: all state is `Locked`; `client` is only read.
    let log = Locked<[String]>([])
    let audioActive = Locked<Bool?>(nil)
    /// How many calls the provider held when each relay went out.
    let systemCallsAtRelay = Locked<[Int]>([])
    weak var provider: HeadlessSystemCallProvider?
    let client: ParleyClient
    var now: Int64 = during
    let verifier = PushPayloadVerifier(applicationKey: "app-1", userID: "alice", deviceID: "dev-1", hmacSHA256: TestEngines.make().hmacSHA256)
    let registration = ParleyPushRegistration(pushType: .apnsVoip, token: "9f1c", environment: .sandbox, appId: "com.example.chat",
                                              pushKey: PushFixtures.key, userId: "alice", deviceId: "dev-1")

    init() throws {
        client = try ParleyClient(applicationKey: "app-1", environmentHost: "http://127.0.0.1:9", userId: "alice", deviceId: "dev-1",
                                  callbackQueue: DispatchQueue(label: "test.callbacks"), pushRegistrationStore: InMemoryPushRegistrationStore(), engines: TestEngines.make())
    }

    func answerCall(_ callID: String) { log.withLock { $0.append("answer \(callID)") } }
    func hangupCall(_ callID: String) { log.withLock { $0.append("hangup \(callID)") } }
    func placeCall(to address: String, kind: ParleyCallRemoteKind, headers: [String: String]) -> Result<ParleyCall, any Error> {
        log.withLock { $0.append(kind == .user ? "call \(address)" : "call \(kind.rawValue) \(address)") }
        guard address != "nobody" else { return .failure(ParleyClientError(code: "not_started", message: "not started")) }
        return .success(ParleyCall(record: ClientCallRecord(callID: c2, direction: .outgoing, remoteUserID: address, headers: headers,
                                                            remoteKind: kind), client: client))
    }
    func queryPush(_ payload: [AnyHashable: Any]) -> ParleyNotificationResult {
        verifier.verify(payload, registration: registration, nowMilliseconds: now).result
    }
    func relayPush(_ payload: [AnyHashable: Any]) -> Result<ParleyNotificationResult, any Error> {
        systemCallsAtRelay.withLock { $0.append(provider?.calls.count ?? -1) }
        let verdict = verifier.verify(payload, registration: registration, nowMilliseconds: now)
        log.withLock { $0.append("relay \(verdict.result.callResult?.callId ?? "?")") }
        return verdict.result.isValid ? .success(verdict.result) : .failure(ParleyClientError(code: "push_payload_invalid", message: "bad"))
    }
    func declinePush(_ payload: [AnyHashable: Any]) -> Result<ParleyNotificationResult, any Error> {
        let verdict = verifier.verify(payload, registration: registration, nowMilliseconds: now)
        log.withLock { $0.append("decline \(verdict.result.callResult?.callId ?? "?")") }
        return verdict.result.isValid ? .success(verdict.result) : .failure(ParleyClientError(code: "push_payload_invalid", message: "bad"))
    }
    func setAudioSessionActive(_ active: Bool) { audioActive.withLock { $0 = active } }
    /// Whether the server refuses `setHeld` (as it does a call that is not established).
    let refusesHold = Locked(false)
    func setHeld(_ call: ParleyCall, held: Bool, completion: @escaping @Sendable ((any Error)?) -> Void) {
        log.withLock { $0.append("hold \(call.callId) \(held)") }
        completion(refusesHold.current ? ParleyClientError(code: "invalid_state", message: "cannot hold: the call is not established") : nil)
    }
    func setMuted(_ muted: Bool) { log.withLock { $0.append("mute \(muted)") } }

    func incomingCall(_ callID: String = c1) -> ParleyCall {
        var record = ClientCallRecord(callID: callID, direction: .incoming, remoteUserID: "bob", headers: [:])
        record.state = .ringing
        return ParleyCall(record: record, client: client)
    }
}

/// The integration guide's flows through `ParleySystemCallService` and the headless
/// provider (which keeps CallKit's rules), with the client side recorded.
@Suite struct SystemCallServiceTests {
    let provider = HeadlessSystemCallProvider()
    let control: RecordingCallControl
    let service: ParleySystemCallService

    init() throws {
        control = try RecordingCallControl()
        service = ParleySystemCallService(control: control, provider: provider, registry: ParleyCallRegistry())
        control.provider = provider
    }

    /// Lets the provider's queue run what is queued, including what that queues (bounded).
    func settle() {
        for _ in 0..<6 { provider.queue.sync {} }
    }

    func push(_ token: String) -> (any Error)?? {
        let outcome = Locked<(any Error)??>(nil)
        service.reportIncomingPush(["parley": token]) { error in outcome.withLock { $0 = .some(error) } }
        settle()
        return outcome.current
    }

    /// Ends `call` as the client would: with `cause`, answered or not, by this device or not.
    func end(_ call: ParleyCall, _ cause: ParleyCallEndCause, answered: Bool = false, byThisDevice: Bool = false) {
        var record = ClientCallRecord(callID: call.callId, direction: call.direction, remoteUserID: call.remoteUserId, headers: [:])
        record.state = .ended
        record.details.endCause = cause
        if answered { record.details.answeredTime = Date(timeIntervalSince1970: 1_764_421_205) }
        record.endedByThisDevice = byThisDevice
        call.update(record)
        service.callDidEnd(call)
        settle()
    }

    @Test func aPushIsReportedBeforeAnythingElseThenRelayed() throws {
        let completion = push(PushFixtures.valid)
        #expect(completion != nil && completion! == nil, "PushKit's completion runs without an error")
        let uuid = try #require(service.systemCallUUID(forCallId: c1))
        #expect(provider.events.first == .reportedIncoming(uuid, handle: "bob"))
        #expect(control.log.current == ["relay \(c1)"])
        #expect(control.systemCallsAtRelay.current == [1], "the system had the call before the relay went out")
        #expect(control.audioActive.current == false, "no audio before the system activates the session")
    }

    @Test func theHoldActionHoldsAndResumesThroughTheClient() throws {
        _ = push(PushFixtures.valid)
        let uuid = try #require(service.systemCallUUID(forCallId: c1))
        service.incomingCallArrived(control.incomingCall())
        provider.answerFromSystemUI(uuid)
        settle()
        provider.holdFromSystemUI(uuid, true)
        settle()
        #expect(provider.events.contains(.action(.setHeld(true), uuid, .fulfilled)))
        #expect(provider.calls[uuid]?.isOnHold == true)
        provider.holdFromSystemUI(uuid, false)
        settle()
        #expect(provider.events.contains(.action(.setHeld(false), uuid, .fulfilled)))
        #expect(provider.calls[uuid]?.isOnHold == false)
        #expect(control.log.current == ["relay \(c1)", "answer \(c1)", "hold \(c1) true", "hold \(c1) false"])
    }

    @Test func aHoldTheServerRefusesFailsTheActionAndTheCallGoesOn() throws {
        _ = push(PushFixtures.valid)
        let uuid = try #require(service.systemCallUUID(forCallId: c1))
        service.incomingCallArrived(control.incomingCall())
        provider.answerFromSystemUI(uuid)
        settle()
        control.refusesHold.withLock { $0 = true }
        provider.holdFromSystemUI(uuid, true)
        settle()
        #expect(provider.events.contains(.action(.setHeld(true), uuid, .failed)))
        #expect(provider.calls[uuid]?.isOnHold == false && provider.calls[uuid]?.phase == .active)
        #expect(!control.log.current.contains("hangup \(c1)"))
    }

    @Test func theMuteActionMutesThroughTheAudioControllerAndIsFulfilled() throws {
        _ = push(PushFixtures.valid)
        let uuid = try #require(service.systemCallUUID(forCallId: c1))
        service.incomingCallArrived(control.incomingCall())
        provider.answerFromSystemUI(uuid)
        settle()
        provider.muteFromSystemUI(uuid, true)
        provider.muteFromSystemUI(uuid, false)
        settle()
        #expect(provider.events.contains(.action(.setMuted(true), uuid, .fulfilled)))
        #expect(provider.events.contains(.action(.setMuted(false), uuid, .fulfilled)))
        #expect(provider.calls[uuid]?.isMuted == false)
        #expect(control.log.current == ["relay \(c1)", "answer \(c1)", "mute true", "mute false"])
    }

    @Test func aDuplicatePushIsReportedOnce() {
        _ = push(PushFixtures.valid)
        _ = push(PushFixtures.valid)
        #expect(provider.events.filter { if case .reportedIncoming = $0 { true } else { false } }.count == 1)
        let uuid = service.systemCallUUID(forCallId: c1)
        #expect(uuid.map { provider.events.contains(.refusedIncoming($0, .callUUIDAlreadyExists)) } == true,
                "the second push is reported too, as iOS requires, and refused as a duplicate")
        #expect(control.log.current == ["relay \(c1)"], "relayed once, never hung up")
        // The call then arriving over the connection is the same system call.
        service.incomingCallArrived(control.incomingCall())
        settle()
        #expect(provider.calls.count == 1 && service.registry.count == 1)
    }

    @Test func theAnswerActionAnswersTheCallAndStartsAudio() throws {
        _ = push(PushFixtures.valid)
        let uuid = try #require(service.systemCallUUID(forCallId: c1))
        service.incomingCallArrived(control.incomingCall())
        provider.answerFromSystemUI(uuid)
        settle()
        #expect(control.log.current == ["relay \(c1)", "answer \(c1)"])
        #expect(provider.events.contains(.action(.answer, uuid, .fulfilled)))
        #expect(provider.calls[uuid]?.phase == .active)
        #expect(control.audioActive.current == true && provider.isAudioActive)
    }

    @Test func anAnswerBeforeTheCallArrivesWaitsForIt() throws {
        _ = push(PushFixtures.valid)
        let uuid = try #require(service.systemCallUUID(forCallId: c1))
        provider.answerFromSystemUI(uuid)
        settle()
        #expect(control.log.current == ["relay \(c1)"])
        #expect(!provider.events.contains { if case .action = $0 { true } else { false } }, "still pending")
        service.incomingCallArrived(control.incomingCall())
        settle()
        #expect(control.log.current == ["relay \(c1)", "answer \(c1)"])
        #expect(provider.events.contains(.action(.answer, uuid, .fulfilled)))
    }

    @Test func theEndActionHangsUpAndIsNotReportedBack() throws {
        _ = push(PushFixtures.valid)
        let uuid = try #require(service.systemCallUUID(forCallId: c1))
        let call = control.incomingCall()
        service.incomingCallArrived(call)
        provider.endFromSystemUI(uuid)
        settle()
        #expect(control.log.current == ["relay \(c1)", "hangup \(c1)"])
        #expect(provider.events.contains(.action(.end, uuid, .fulfilled)) && provider.calls.isEmpty)
        end(call, .denied)
        #expect(!provider.events.contains { if case .reportedEnded = $0 { true } else { false } })
        #expect(service.registry.count == 0)
    }

    @Test func declinedBeforeTheCallArrivesHangsItUpOnArrival() throws {
        _ = push(PushFixtures.valid)
        let uuid = try #require(service.systemCallUUID(forCallId: c1))
        provider.endFromSystemUI(uuid)
        settle()
        service.incomingCallArrived(control.incomingCall())
        settle()
        #expect(control.log.current == ["relay \(c1)", "hangup \(c1)"])
        #expect(provider.calls.isEmpty)
    }

    @Test func aRemoteEndIsReportedWithTheMappedReason() throws {
        _ = push(PushFixtures.valid)
        let uuid = try #require(service.systemCallUUID(forCallId: c1))
        let call = control.incomingCall()
        service.incomingCallArrived(call)
        end(call, .canceled)
        #expect(provider.events.last == .reportedEnded(uuid, .remoteEnded), "the caller explicitly ended it")
        #expect(provider.calls.isEmpty && service.registry.count == 0)
    }

    @Test func aCallThisDeviceHungUpIsEndedWithAnEndActionNotAsRemoteEnded() throws {
        _ = push(PushFixtures.valid)
        let uuid = try #require(service.systemCallUUID(forCallId: c1))
        let call = control.incomingCall()
        service.incomingCallArrived(call)
        provider.answerFromSystemUI(uuid)
        settle()
        // The app hangs up with call.hangup(), not through the system's screen.
        end(call, .hungUp, answered: true, byThisDevice: true)
        #expect(provider.events.contains(.action(.end, uuid, .fulfilled)), "\(provider.events)")
        #expect(!provider.events.contains { if case .reportedEnded = $0 { true } else { false } })
        #expect(provider.calls.isEmpty && !provider.isAudioActive && service.registry.count == 0)
        // An outgoing call this device canceled ends the same way.
        let placed = Locked<ParleyCall?>(nil)
        service.startCall(toUserId: "carol") { result in placed.withLock { $0 = try? result.get() } }
        settle()
        let outgoing = try #require(placed.current)
        let outgoingUUID = try #require(service.systemCallUUID(forCallId: outgoing.callId))
        end(outgoing, .canceled, byThisDevice: true)
        #expect(provider.events.contains(.action(.end, outgoingUUID, .fulfilled)))
        #expect(provider.calls.isEmpty)
    }

    @Test func endReasonsFollowWhoEndedTheCallAndWhereItWas() {
        typealias Case = (ParleyCallEndCause, ParleyCallDirection, answered: Bool, here: Bool, SystemCallEndReason?)
        let table: [Case] = [
            (.hungUp, .incoming, true, true, nil), (.hungUp, .outgoing, true, true, nil),
            (.canceled, .outgoing, false, true, nil), (.denied, .incoming, false, true, nil),
            (.hungUp, .incoming, true, false, .remoteEnded), (.hungUp, .outgoing, true, false, .remoteEnded),
            (.canceled, .incoming, false, false, .remoteEnded),
            (.denied, .outgoing, false, false, .remoteEnded), (.denied, .incoming, false, false, .declinedElsewhere),
            (.otherDeviceAnswered, .incoming, false, false, .answeredElsewhere),
            (.timeout, .incoming, false, false, .unanswered), (.timeout, .outgoing, false, false, .unanswered),
            (.timeout, .outgoing, true, false, .failed), (.timeout, .incoming, true, false, .failed),
            (.noAnswer, .outgoing, false, false, .unanswered), (.noAnswer, .incoming, false, false, .unanswered),
            (.inactive, .incoming, true, false, .failed), (.inactive, .outgoing, false, false, .failed),
            (.error, .outgoing, false, false, .failed), (.error, .incoming, true, true, .failed), (.none, .incoming, false, false, .failed),
        ]
        for (cause, direction, answered, here, expected) in table {
            #expect(ParleySystemCallService.endReason(cause: cause, direction: direction, wasAnswered: answered, endedByThisDevice: here) == expected,
                    "\(cause) \(direction) answered=\(answered) here=\(here)")
        }
    }

    @Test func theEndOfAnAnsweredCallAtItsMaximumLengthIsNotUnanswered() throws {
        _ = push(PushFixtures.valid)
        let uuid = try #require(service.systemCallUUID(forCallId: c1))
        let call = control.incomingCall()
        service.incomingCallArrived(call)
        end(call, .timeout, answered: true)
        #expect(provider.events.last == .reportedEnded(uuid, .failed))
    }

    @Test func aDeclineByAnotherDeviceIsDeclinedElsewhere() throws {
        _ = push(PushFixtures.valid)
        let uuid = try #require(service.systemCallUUID(forCallId: c1))
        let call = control.incomingCall()
        service.incomingCallArrived(call)
        end(call, .denied)
        #expect(provider.events.last == .reportedEnded(uuid, .declinedElsewhere))
    }

    @Test func doNotDisturbDeclinesThePushedCallAtOnce() {
        provider.doNotDisturb = true
        let completion = push(PushFixtures.valid)
        let refusal: (any Error)? = completion ?? nil
        #expect((refusal as? SystemCallError)?.code == .filteredByDoNotDisturb)
        #expect(service.registry.count == 0 && provider.calls.isEmpty)
        #expect(control.log.current == ["decline \(c1)"], "relayed and declined, so the caller is not left ringing")
        // Should the call arrive over a live connection after all, the system refuses it
        // again and it is hung up.
        service.incomingCallArrived(control.incomingCall())
        settle()
        #expect(control.log.current == ["decline \(c1)", "hangup \(c1)"])
        // A call over a live connection that the system refuses is hung up too.
        service.incomingCallArrived(control.incomingCall(c2))
        settle()
        #expect(control.log.current == ["decline \(c1)", "hangup \(c1)", "hangup \(c2)"])
        #expect(service.registry.count == 0)
    }

    @Test func aPushAlreadyHereWhenTheSystemRefusesItIsHungUp() throws {
        // The report is in flight when the call arrives over the live connection.
        provider.doNotDisturb = true
        provider.queue.suspend()
        service.reportIncomingPush(["parley": PushFixtures.valid]) { _ in }
        service.incomingCallArrived(control.incomingCall())
        provider.queue.resume()
        settle()
        #expect(control.log.current == ["hangup \(c1)"], "declined as a known call, not relayed")
        #expect(service.registry.count == 0 && provider.calls.isEmpty)
    }

    @Test func aCallRelayedAfterARefusedReportIsDeclinedNotLeftRinging() {
        // The guide's hand-written flow gone wrong: the app reports the push itself, the
        // system refuses, the app relays anyway. The call arrives through the mediator;
        // the service reports it, is refused again, and declines it.
        provider.doNotDisturb = true
        let refused = Locked<(any Error)?>(nil)
        provider.reportNewIncomingCall(with: UUID(), update: SystemCallUpdate(remoteHandle: "bob")) { error in refused.withLock { $0 = error } }
        settle()
        #expect(refused.current != nil)
        _ = control.relayPush(["parley": PushFixtures.valid])
        service.incomingCallArrived(control.incomingCall())
        settle()
        #expect(control.log.current == ["relay \(c1)", "hangup \(c1)"])
        #expect(provider.calls.isEmpty && service.registry.count == 0)
    }

    @Test func providerResetHangsUpEveryCall() throws {
        _ = push(PushFixtures.valid)
        service.incomingCallArrived(control.incomingCall())
        let uuid = try #require(service.systemCallUUID(forCallId: c1))
        provider.answerFromSystemUI(uuid)
        service.incomingCallArrived(control.incomingCall(c2))
        settle()
        #expect(provider.calls.count == 2 && control.audioActive.current == true)
        #expect(Set(service.registry.activeCalls.map(\.callId)) == [c1, c2], "the registry hands back the call objects")
        provider.reset()
        settle()
        #expect(Set(control.log.current.filter { $0.hasPrefix("hangup") }) == ["hangup \(c1)", "hangup \(c2)"])
        #expect(service.registry.count == 0 && provider.calls.isEmpty && service.registry.activeCalls.isEmpty)
        #expect(control.audioActive.current == false)
    }

    @Test func forgedAndExpiredPushesAreShownAndEndedAtOnce() {
        let forged = push(PushFixtures.forged)
        #expect(forged != nil && forged! != nil)
        #expect(provider.events.count == 2)
        if case .reportedEnded(_, let reason) = provider.events.last { #expect(reason == .failed) } else { Issue.record("\(provider.events)") }
        control.now = 1_764_421_240_000
        _ = push(PushFixtures.valid)
        #expect(provider.events.last.map { if case .reportedEnded(_, .unanswered) = $0 { true } else { false } } == true)
        #expect(control.log.current.isEmpty, "neither is relayed")
        #expect(provider.calls.isEmpty && service.registry.count == 0)
    }

    @Test func outgoingCallsReportProgressAndConnection() throws {
        let placed = Locked<ParleyCall?>(nil)
        service.startCall(toUserId: "carol") { result in placed.withLock { $0 = try? result.get() } }
        settle()
        let call = try #require(placed.current)
        let uuid = try #require(service.systemCallUUID(forCallId: call.callId))
        #expect(provider.events.contains(.action(.start(handle: "carol", video: false), uuid, .fulfilled)))
        #expect(control.audioActive.current == true)
        service.callDidProgress(call)
        service.callDidRing(call)
        settle()
        service.callDidAnswer(call)
        service.callDidEstablish(call)
        settle()
        #expect(provider.events.filter { $0 == .reportedConnecting(uuid) || $0 == .reportedConnected(uuid) }
                == [.reportedConnecting(uuid), .reportedConnected(uuid)])
        end(call, .hungUp, answered: true)
        #expect(provider.events.suffix(2) == [.reportedEnded(uuid, .remoteEnded), .audioDeactivated])
        #expect(control.audioActive.current == false)
    }

    @Test func phoneAndSIPCallsStartThroughTheSystemToo() throws {
        let phone = Locked<ParleyCall?>(nil)
        service.startCall(toPhoneNumber: "+4615550101", headers: ["x-a": "1"]) { result in phone.withLock { $0 = try? result.get() } }
        settle()
        let call = try #require(phone.current)
        #expect(call.remoteKind == .phone && call.remoteUserId == "+4615550101")
        let uuid = try #require(service.systemCallUUID(forCallId: call.callId))
        #expect(provider.events.contains(.action(.start(handle: "+4615550101", video: false), uuid, .fulfilled)))
        end(call, .hungUp, answered: true)
        let sip = Locked<ParleyCall?>(nil)
        service.startCall(toSIP: "alice@example.test") { result in sip.withLock { $0 = try? result.get() } }
        settle()
        #expect(sip.current?.remoteKind == .sip)
        #expect(control.log.current == ["call phone +4615550101", "call sip alice@example.test"])
    }

    @Test func aStartTheClientRefusesFailsTheAction() {
        let outcome = Locked<Result<ParleyCall, any Error>?>(nil)
        service.startCall(toUserId: "nobody") { result in outcome.withLock { $0 = result } }
        settle()
        #expect(provider.events.contains { if case .action(.start, _, .failed) = $0 { true } else { false } })
        #expect(provider.calls.isEmpty)
        if case .failure = outcome.current {} else { Issue.record("expected a failure") }
    }
}

/// The headless provider keeps the system's rules on its own.
@Suite struct HeadlessSystemCallProviderTests {
    final class Delegate: SystemCallProviderDelegate, @unchecked Sendable {
        let actions = Locked<[SystemCallAction]>([])
        func providerDidReset() {}
        func perform(_ action: SystemCallAction) { actions.withLock { $0.append(action) } }
        func didActivateAudioSession() {}
        func didDeactivateAudioSession() {}
    }

    @Test func refusalsLikeCallKit() async throws {
        let provider = HeadlessSystemCallProvider(maximumCalls: 1)
        let delegate = Delegate()
        provider.setDelegate(delegate)
        let errors = Locked<[SystemCallError.Code?]>([])
        let uuid = UUID()
        for _ in 0..<2 {
            provider.reportNewIncomingCall(with: uuid, update: SystemCallUpdate(remoteHandle: "bob")) { error in
                errors.withLock { $0.append((error as? SystemCallError)?.code) }
            }
        }
        provider.reportNewIncomingCall(with: UUID(), update: SystemCallUpdate(remoteHandle: "eve")) { error in
            errors.withLock { $0.append((error as? SystemCallError)?.code) }
        }
        provider.request(.answer, callUUID: UUID()) { error in errors.withLock { $0.append((error as? SystemCallError)?.code) } }
        provider.queue.sync {}
        #expect(errors.current == [nil, .callUUIDAlreadyExists, .maximumCallGroupsReached, .unknownCallUUID])
    }

    @Test func anUnfinishedActionFailsAfterItsTimeout() async throws {
        let provider = HeadlessSystemCallProvider(actionTimeout: .milliseconds(50))
        let delegate = Delegate()
        provider.setDelegate(delegate)
        let uuid = UUID()
        provider.reportNewIncomingCall(with: uuid, update: SystemCallUpdate(remoteHandle: "bob")) { _ in }
        provider.answerFromSystemUI(uuid)
        for _ in 0..<100 where !provider.events.contains(.action(.answer, uuid, .failed)) {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(provider.events.contains(.action(.answer, uuid, .failed)))
        #expect(delegate.actions.current.first?.result == .failed)
        // Fulfilling it late changes nothing: an action finishes once.
        delegate.actions.current.first?.fulfill()
        #expect(delegate.actions.current.first?.result == .failed)
        #expect(!provider.isAudioActive)
    }

    @Test func registryDeduplicatesAndLinks() {
        let registry = ParleyCallRegistry()
        let first = registry.claim(callId: c1)
        #expect(first.isNew && registry.claim(callId: c1) == (first.uuid, false))
        #expect(registry.callId(for: first.uuid) == c1)
        let outgoing = UUID()
        #expect(registry.link(uuid: outgoing, callId: c2) && !registry.link(uuid: outgoing, callId: "other"))
        #expect(!registry.link(uuid: UUID(), callId: c1))
        registry.remove(callId: c1)
        #expect(registry.uuid(forCallId: c1) == nil && registry.callId(for: first.uuid) == nil && registry.count == 1)
        #expect(registry.removeAll().map(\.callId) == [c2] && registry.count == 0)
    }

    @Test func theRegistryKeepsCallObjectsUntilTheyEnd() throws {
        let control = try RecordingCallControl()
        let registry = ParleyCallRegistry()
        let ringing = control.incomingCall(c1)
        #expect(!registry.attach(ringing), "a call id that was never claimed keeps nothing")
        _ = registry.claim(callId: c1)
        #expect(registry.attach(ringing))
        #expect(registry.call(forCallId: c1) === ringing && registry.activeCalls.map(\.callId) == [c1])
        var over = ClientCallRecord(callID: c1, direction: .incoming, remoteUserID: "bob", headers: [:])
        over.state = .ended
        ringing.update(over)
        #expect(registry.activeCalls.isEmpty, "an ended call is not active")
        registry.remove(callId: c1)
        #expect(registry.call(forCallId: c1) == nil)
    }
}
