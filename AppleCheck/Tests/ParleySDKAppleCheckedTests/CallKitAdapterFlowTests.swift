// The integration guide's flows (docs/push-and-callkit.md) through the real
// `CallKitSystemCallProvider` over the CallKit mirror: the adapter's translation both ways,
// on the queues CallKit uses. A recording `SystemCallProviderDelegate` stands where
// `ParleySystemCallService` sits in an app (the service's own logic is tested on Linux with
// the headless provider, Tests/ParleySDKTests).
import CallKit
import Foundation
import ParleySDKCore
import ParleySDKAppleChecked
import Testing

/// Records what the adapter tells the integration; fulfils or fails actions as told.
final class RecordingDelegate: SystemCallProviderDelegate, @unchecked Sendable {
    // @unchecked: every field is behind `lock`.
    enum Event: Equatable {
        case reset, perform(SystemCallAction.Kind, UUID), activated, deactivated
    }

    private let lock = NSLock()
    private var recorded: [Event] = []
    private var actions: [SystemCallAction] = []
    /// How `perform` completes each action: nil leaves it for the test.
    private let answer: SystemCallAction.Outcome?

    init(answer: SystemCallAction.Outcome? = .fulfilled) { self.answer = answer }

    var events: [Event] { lock.withLock { recorded } }
    var performed: [SystemCallAction] { lock.withLock { actions } }

    func providerDidReset() { record(.reset) }
    func didActivateAudioSession() { record(.activated) }
    func didDeactivateAudioSession() { record(.deactivated) }

    func perform(_ action: SystemCallAction) {
        lock.withLock { actions.append(action) }
        record(.perform(action.kind, action.callUUID))
        switch answer {
        case .fulfilled: action.fulfill()
        case .failed: action.fail()
        case nil: break
        }
    }

    private func record(_ event: Event) { lock.withLock { recorded.append(event) } }
}

/// Waits (bounded) for `condition`: the mirror, like CallKit, answers on other queues.
func eventually(_ what: Comment, within seconds: Double = 5, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out waiting for \(what)")
            return
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// The completion of a report or request, once it comes.
final class Completion: @unchecked Sendable {
    // @unchecked: `value` is behind `lock`.
    private let lock = NSLock()
    private var value: (any Error)??

    var result: (any Error)?? { lock.withLock { value } }
    var handler: @Sendable ((any Error)?) -> Void { { error in self.lock.withLock { self.value = .some(error) } } }

    func wait() async throws -> (any Error)? {
        try await eventually("a completion") { result != nil }
        return result ?? nil
    }
}

// One provider at a time: the mirror's CXCallController sends to the last provider made,
// as an app's single provider receives every request.
@Suite(.serialized)
struct CallKitAdapterFlowTests {
    let delegate: RecordingDelegate
    let adapter: CallKitSystemCallProvider
    let system: CXProvider

    init() throws {
        delegate = RecordingDelegate()
        adapter = CallKitSystemCallProvider(localizedName: "Chat")
        adapter.setDelegate(delegate)
        system = try #require(CXProvider.mirrorCurrent)
    }

    private func reportIncoming(_ uuid: UUID, from handle: String = "alice") async throws -> (any Error)? {
        let done = Completion()
        adapter.reportNewIncomingCall(with: uuid, update: SystemCallUpdate(remoteHandle: handle, localizedCallerName: "Alice"),
                                      completion: done.handler)
        return try await done.wait()
    }

    @Test func theProviderIsConfiguredForOneCallWithTheAppsRingtone() throws {
        let ringing = CallKitSystemCallProvider(localizedName: "Chat", supportsVideo: true, ringtoneSound: "ring.caf")
        let configuration = try #require(CXProvider.mirrorCurrent).configuration
        #expect(configuration.ringtoneSound == "ring.caf")
        #expect(configuration.supportsVideo && configuration.maximumCallGroups == 1 && configuration.maximumCallsPerCallGroup == 1)
        #expect(configuration.supportedHandleTypes == [.generic])
        withExtendedLifetime(ringing) {}
        #expect(system.configuration.ringtoneSound == nil, "the default rings the system's ringtone")
    }

    @Test func anIncomingCallIsReportedBeforeAnythingElse() async throws {
        let uuid = UUID()
        #expect(try await reportIncoming(uuid) == nil)
        #expect(system.mirrorReports == [.incoming(uuid, refused: nil)])
        #expect(system.mirrorCalls[uuid]?.remoteHandle == "alice")
        #expect(system.mirrorCalls[uuid]?.isOutgoing == false)
        // Nothing reached the integration: no action, no audio before the user answers.
        #expect(delegate.events.isEmpty)
        #expect(!system.mirrorIsAudioSessionActive)
    }

    @Test func aSecondReportUnderTheSameUUIDIsRefusedAsADuplicate() async throws {
        let uuid = UUID()
        #expect(try await reportIncoming(uuid) == nil)
        let error = try await reportIncoming(uuid)
        #expect((error as? SystemCallError)?.code == .callUUIDAlreadyExists)
        #expect(system.mirrorCalls.count == 1)
    }

    @Test func theSystemsAnswerReachesTheIntegrationIsFulfilledAndActivatesAudio() async throws {
        let uuid = UUID()
        #expect(try await reportIncoming(uuid) == nil)
        let answer = try #require(system.mirrorUserAnswers(uuid))
        try await eventually("audio activation") { delegate.events.contains(.activated) }
        #expect(delegate.events == [.perform(.answer, uuid), .activated])
        #expect(answer.mirrorOutcome == true)
        #expect(system.mirrorCalls[uuid]?.isActive == true)
        #expect(system.mirrorIsAudioSessionActive)
    }

    @Test func theSystemsEndActionHangsUpAndReleasesAudio() async throws {
        let uuid = UUID()
        #expect(try await reportIncoming(uuid) == nil)
        system.mirrorUserAnswers(uuid)
        try await eventually("audio activation") { delegate.events.contains(.activated) }
        let end = try #require(system.mirrorUserEnds(uuid))
        try await eventually("audio deactivation") { delegate.events.contains(.deactivated) }
        #expect(delegate.events == [.perform(.answer, uuid), .activated, .perform(.end, uuid), .deactivated])
        #expect(end.mirrorOutcome == true)
        #expect(system.mirrorCalls.isEmpty)
        // The end came from the system: nothing is reported back.
        #expect(system.mirrorReports == [.incoming(uuid, refused: nil)])
    }

    @Test func aDeclineBeforeTheAnswerEndsTheCallWithoutAudio() async throws {
        let uuid = UUID()
        #expect(try await reportIncoming(uuid) == nil)
        system.mirrorUserEnds(uuid)
        try await eventually("the end action") { system.mirrorCalls.isEmpty }
        #expect(delegate.events == [.perform(.end, uuid)])
    }

    @Test(arguments: [
        (CXErrorCodeIncomingCallError.Code.filteredByDoNotDisturb, SystemCallError.Code.filteredByDoNotDisturb),
        (.filteredByBlockList, .filteredByBlockList),
        (.unentitled, .unentitled),
        (.callIsProtected, .unknown),
    ])
    func aRefusedReportSurfacesTheSystemsReason(refusal: CXErrorCodeIncomingCallError.Code, expected: SystemCallError.Code) async throws {
        system.mirrorRefuseIncomingCalls(with: refusal)
        let uuid = UUID()
        let error = try await reportIncoming(uuid)
        #expect((error as? SystemCallError)?.code == expected)
        #expect(system.mirrorCalls.isEmpty)
        #expect(delegate.events.isEmpty)
    }

    @Test func aResetReachesTheIntegrationAndEndsEveryCall() async throws {
        let uuid = UUID()
        #expect(try await reportIncoming(uuid) == nil)
        system.mirrorUserAnswers(uuid)
        try await eventually("audio activation") { delegate.events.contains(.activated) }
        system.mirrorReset()
        try await eventually("the reset and the deactivation") { delegate.events.contains(.deactivated) }
        #expect(delegate.events == [.perform(.answer, uuid), .activated, .reset, .deactivated])
        #expect(system.mirrorCalls.isEmpty)
    }

    @Test func anOutgoingCallIsStartedReportedAndEndedRemotely() async throws {
        let uuid = UUID()
        let done = Completion()
        adapter.request(.start(handle: "bob", video: false), callUUID: uuid, completion: done.handler)
        #expect(try await done.wait() == nil)
        try await eventually("audio activation") { delegate.events.contains(.activated) }
        #expect(delegate.events == [.perform(.start(handle: "bob", video: false), uuid), .activated])
        #expect(system.mirrorCalls[uuid]?.remoteHandle == "bob")
        #expect(system.mirrorCalls[uuid]?.isOutgoing == true)

        adapter.reportOutgoingCall(with: uuid, startedConnectingAt: Date())
        adapter.reportOutgoingCall(with: uuid, connectedAt: Date())
        adapter.reportCall(with: uuid, endedAt: Date(), reason: .remoteEnded)
        try await eventually("audio deactivation") { delegate.events.contains(.deactivated) }
        #expect(system.mirrorReports == [.startedConnecting(uuid), .connected(uuid), .ended(uuid, .remoteEnded)])
        #expect(system.mirrorCalls.isEmpty)
    }

    @Test(arguments: SystemCallEndReason.allCases)
    func everyEndReasonReachesCallKit(reason: SystemCallEndReason) async throws {
        let uuid = UUID()
        #expect(try await reportIncoming(uuid) == nil)
        adapter.reportCall(with: uuid, endedAt: Date(), reason: reason)
        let expected: CXCallEndedReason = switch reason {
        case .failed: .failed
        case .remoteEnded: .remoteEnded
        case .unanswered: .unanswered
        case .answeredElsewhere: .answeredElsewhere
        case .declinedElsewhere: .declinedElsewhere
        }
        #expect(system.mirrorReports.last == .ended(uuid, expected))
    }

    @Test func theAppsOwnEndIsPerformedThroughTheSystem() async throws {
        let uuid = UUID()
        #expect(try await reportIncoming(uuid) == nil)
        let done = Completion()
        adapter.request(.end, callUUID: uuid, completion: done.handler)
        #expect(try await done.wait() == nil)
        try await eventually("the end action") { system.mirrorCalls.isEmpty }
        #expect(delegate.events == [.perform(.end, uuid)])
    }

    @Test func aRequestForAnUnknownCallIsRefused() async throws {
        let done = Completion()
        adapter.request(.answer, callUUID: UUID(), completion: done.handler)
        let error = try await done.wait()
        #expect((error as? SystemCallError)?.code == .unknownCallUUID)
        #expect(delegate.events.isEmpty)
    }

    @Test func aSecondCallIsRefusedWithOneCallGroup() async throws {
        #expect(try await reportIncoming(UUID()) == nil)
        let done = Completion()
        adapter.request(.start(handle: "bob", video: false), callUUID: UUID(), completion: done.handler)
        let error = try await done.wait()
        #expect((error as? SystemCallError)?.code == .maximumCallGroupsReached)
    }

    @Test func anActionTheIntegrationFailsFailsInCallKit() async throws {
        let failing = RecordingDelegate(answer: .failed)
        adapter.setDelegate(failing)
        let uuid = UUID()
        #expect(try await reportIncoming(uuid) == nil)
        let answer = try #require(system.mirrorUserAnswers(uuid))
        try await eventually("the failed answer") { answer.mirrorOutcome != nil }
        #expect(answer.mirrorOutcome == false)
        #expect(!system.mirrorIsAudioSessionActive)
    }

    @Test func muteFromTheSystemIsHandedToTheIntegrationAndFulfilled() async throws {
        let uuid = UUID()
        #expect(try await reportIncoming(uuid) == nil)
        let mute = try #require(system.mirrorUserSetsMuted(uuid, true))
        try await eventually("the fulfilled mute") { mute.mirrorOutcome != nil }
        #expect(mute.mirrorOutcome == true)
        #expect(delegate.events == [.perform(.setMuted(true), uuid)])
        #expect(system.mirrorCalls[uuid]?.isMuted == true)
    }

    @Test func holdFromTheSystemIsHandedToTheIntegrationAndFollowsItsOutcome() async throws {
        let uuid = UUID()
        #expect(try await reportIncoming(uuid) == nil)
        let hold = try #require(system.mirrorUserSetsHeld(uuid, true))
        try await eventually("the fulfilled hold") { hold.mirrorOutcome != nil }
        #expect(hold.mirrorOutcome == true)
        #expect(system.mirrorCalls[uuid]?.isOnHold == true)
        let resume = try #require(system.mirrorUserSetsHeld(uuid, false))
        try await eventually("the fulfilled resume") { resume.mirrorOutcome != nil }
        #expect(resume.mirrorOutcome == true && system.mirrorCalls[uuid]?.isOnHold == false)
        #expect(delegate.events == [.perform(.setHeld(true), uuid), .perform(.setHeld(false), uuid)])
    }

    @Test func aHoldTheIntegrationFailsFailsInCallKit() async throws {
        let failing = RecordingDelegate(answer: .failed)
        adapter.setDelegate(failing)
        let uuid = UUID()
        #expect(try await reportIncoming(uuid) == nil)
        let hold = try #require(system.mirrorUserSetsHeld(uuid, true))
        try await eventually("the failed hold") { hold.mirrorOutcome != nil }
        #expect(hold.mirrorOutcome == false)
        #expect(system.mirrorCalls[uuid]?.isOnHold == false)
    }

    @Test func holdAndMuteRequestsBecomeCallKitActions() async throws {
        let uuid = UUID()
        #expect(try await reportIncoming(uuid) == nil)
        let held = Completion()
        adapter.request(.setHeld(true), callUUID: uuid, completion: held.handler)
        #expect(try await held.wait() == nil)
        let muted = Completion()
        adapter.request(.setMuted(true), callUUID: uuid, completion: muted.handler)
        #expect(try await muted.wait() == nil)
        try await eventually("both actions") { delegate.events.count == 2 }
        #expect(delegate.events == [.perform(.setHeld(true), uuid), .perform(.setMuted(true), uuid)])
    }
}
