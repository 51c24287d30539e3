#if canImport(CallKit)
public import CallKit
public import Foundation
@_spi(ParleyEngines) public import ParleySDKCore
// Public: `AVAudioSession` is in the signatures of the public `CXProviderDelegate` methods below.
public import AVFoundation

/// `SystemCallProvider` over CallKit: a `CXProvider` for reports and a `CXCallController`
/// for requests; the provider's delegate callbacks become `SystemCallProviderDelegate`
/// calls. Empty on Linux (no CallKit); type-checked and run over a CallKit mirror by
/// AppleCheck/ (docs/push-and-callkit.md).
public final class CallKitSystemCallProvider: NSObject, SystemCallProvider, CXProviderDelegate, @unchecked Sendable {
    // @unchecked: CXProvider and CXCallController are thread-safe; `delegate` is `Locked`.
    private let provider: CXProvider
    private let controller = CXCallController()
    private let delegateSlot = Locked(WeakReference())

    /// A provider for one call at a time with `.generic` handles; delegate calls on `queue`.
    /// - Parameters:
    ///   - localizedName: the name the call screen shows before iOS 14; from iOS 14 the
    ///     system shows the app's own name and ignores it.
    ///   - ringtoneSound: a sound file in the app's main bundle rung for incoming calls
    ///     (`CXProviderConfiguration.ringtoneSound`); nil rings the system's ringtone.
    public init(localizedName: String, supportsVideo: Bool = false, iconTemplateImageData: Data? = nil,
                ringtoneSound: String? = nil, queue: DispatchQueue = DispatchQueue(label: "parley.callkit")) {
        let configuration: CXProviderConfiguration
        if #available(iOS 14.0, macCatalyst 14.0, *) {
            // `localizedName` is read-only (and deprecated) from iOS 14, and `init()` new there.
            configuration = CXProviderConfiguration()
        } else {
            configuration = CXProviderConfiguration(localizedName: localizedName)
        }
        configuration.supportsVideo = supportsVideo
        configuration.maximumCallGroups = 1
        configuration.maximumCallsPerCallGroup = 1
        configuration.supportedHandleTypes = [.generic]
        configuration.iconTemplateImageData = iconTemplateImageData
        configuration.ringtoneSound = ringtoneSound
        provider = CXProvider(configuration: configuration)
        super.init()
        provider.setDelegate(self, queue: queue)
    }

    public func setDelegate(_ delegate: any SystemCallProviderDelegate) {
        delegateSlot.withLock { $0.object = delegate }
    }

    private var delegate: (any SystemCallProviderDelegate)? { delegateSlot.current.object as? any SystemCallProviderDelegate }

    public func reportNewIncomingCall(with uuid: UUID, update: SystemCallUpdate, completion: @escaping @Sendable ((any Error)?) -> Void) {
        provider.reportNewIncomingCall(with: uuid, update: Self.callUpdate(update)) { error in
            completion(error.map(Self.systemError))
        }
    }

    public func reportOutgoingCall(with uuid: UUID, startedConnectingAt date: Date) {
        provider.reportOutgoingCall(with: uuid, startedConnectingAt: date)
    }

    public func reportOutgoingCall(with uuid: UUID, connectedAt date: Date) {
        provider.reportOutgoingCall(with: uuid, connectedAt: date)
    }

    public func reportCall(with uuid: UUID, endedAt date: Date, reason: SystemCallEndReason) {
        let mapped: CXCallEndedReason = switch reason {
        case .failed: .failed
        case .remoteEnded: .remoteEnded
        case .unanswered: .unanswered
        case .answeredElsewhere: .answeredElsewhere
        case .declinedElsewhere: .declinedElsewhere
        }
        provider.reportCall(with: uuid, endedAt: date, reason: mapped)
    }

    public func request(_ kind: SystemCallAction.Kind, callUUID: UUID, completion: @escaping @Sendable ((any Error)?) -> Void) {
        let action: CXCallAction
        switch kind {
        case .start(let handle, let video):
            let start = CXStartCallAction(call: callUUID, handle: CXHandle(type: .generic, value: handle))
            start.isVideo = video
            action = start
        case .answer: action = CXAnswerCallAction(call: callUUID)
        case .end: action = CXEndCallAction(call: callUUID)
        case .setHeld(let held): action = CXSetHeldCallAction(call: callUUID, onHold: held)
        case .setMuted(let muted): action = CXSetMutedCallAction(call: callUUID, muted: muted)
        }
        controller.request(CXTransaction(action: action)) { error in completion(error.map(Self.systemError)) }
    }

    // MARK: CXProviderDelegate

    public func providerDidReset(_ provider: CXProvider) { delegate?.providerDidReset() }

    public func provider(_ provider: CXProvider, perform action: CXStartCallAction) {
        Self.configureCallAudio()
        hand(action, .start(handle: action.handle.value, video: action.isVideo))
    }

    public func provider(_ provider: CXProvider, perform action: CXAnswerCallAction) {
        Self.configureCallAudio()
        hand(action, .answer)
    }

    /// CallKit activates the audio session once a start or answer action is fulfilled,
    /// with the category set at that moment: the media engine's (play and record, voice
    /// chat) must be set before, as the guides' `configureAudioSessionForCallKitCall()` is.
    private static func configureCallAudio() {
        #if canImport(WebRTC)
        AppleMediaEngine.configureAudioSessionForCall()
        #endif
    }
    public func provider(_ provider: CXProvider, perform action: CXEndCallAction) { hand(action, .end) }

    /// Mute: the client's audio controller mutes or unmutes the microphone; fulfilled at once.
    public func provider(_ provider: CXProvider, perform action: CXSetMutedCallAction) { hand(action, .setMuted(action.isMuted)) }
    /// Hold: `ParleyCall.setHeld(_:completion:)`; fulfilled once the server accepted it,
    /// failed when it refused (the call not established, ...). The call goes on either way.
    public func provider(_ provider: CXProvider, perform action: CXSetHeldCallAction) { hand(action, .setHeld(action.isOnHold)) }

    public func provider(_ provider: CXProvider, didActivate audioSession: AVAudioSession) { delegate?.didActivateAudioSession() }
    public func provider(_ provider: CXProvider, didDeactivate audioSession: AVAudioSession) { delegate?.didDeactivateAudioSession() }

    private func hand(_ action: CXCallAction, _ kind: SystemCallAction.Kind) {
        guard let delegate else { return action.fail() }
        // CXAction is thread-safe but not marked Sendable; SystemCallAction completes it once.
        nonisolated(unsafe) let cxAction = action
        delegate.perform(SystemCallAction(kind: kind, callUUID: action.callUUID) { outcome in
            switch outcome {
            case .fulfilled: cxAction.fulfill()
            case .failed: cxAction.fail()
            }
        })
    }

    private static func callUpdate(_ update: SystemCallUpdate) -> CXCallUpdate {
        let callUpdate = CXCallUpdate()
        callUpdate.remoteHandle = CXHandle(type: .generic, value: update.remoteHandle)
        callUpdate.localizedCallerName = update.localizedCallerName
        callUpdate.hasVideo = update.hasVideo
        callUpdate.supportsDTMF = false
        callUpdate.supportsHolding = true
        callUpdate.supportsGrouping = false
        callUpdate.supportsUngrouping = false
        return callUpdate
    }

    private static func systemError(_ error: any Error) -> any Error {
        let nsError = error as NSError
        if nsError.domain == CXErrorCodeIncomingCallError.errorDomain {
            switch CXErrorCodeIncomingCallError.Code(rawValue: nsError.code) {
            case .filteredByDoNotDisturb: return SystemCallError(.filteredByDoNotDisturb, nsError.localizedDescription)
            case .filteredByBlockList: return SystemCallError(.filteredByBlockList, nsError.localizedDescription)
            case .callUUIDAlreadyExists: return SystemCallError(.callUUIDAlreadyExists, nsError.localizedDescription)
            case .unentitled: return SystemCallError(.unentitled, nsError.localizedDescription)
            default: return SystemCallError(.unknown, nsError.localizedDescription)
            }
        }
        if nsError.domain == CXErrorCodeRequestTransactionError.errorDomain {
            switch CXErrorCodeRequestTransactionError.Code(rawValue: nsError.code) {
            case .unknownCallUUID: return SystemCallError(.unknownCallUUID, nsError.localizedDescription)
            case .maximumCallGroupsReached: return SystemCallError(.maximumCallGroupsReached, nsError.localizedDescription)
            case .callUUIDAlreadyExists: return SystemCallError(.callUUIDAlreadyExists, nsError.localizedDescription)
            case .unentitled: return SystemCallError(.unentitled, nsError.localizedDescription)
            default: return SystemCallError(.unknown, nsError.localizedDescription)
            }
        }
        return SystemCallError(.unknown, nsError.localizedDescription)
    }
}
#endif
