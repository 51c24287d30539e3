#if canImport(LiveCommunicationKit) && !os(macOS)
// `SystemCallProvider` over LiveCommunicationKit (iOS 17.4+). Empty on Linux (no
// LiveCommunicationKit there); AppleCheck/ type-checks it against a mirror written from
// Apple's documentation. Never compiled against an Apple SDK: every API used below was
// checked by reading these pages (developer.apple.com,
// /documentation/livecommunicationkit/...):
//
// - conversationmanager: `final class ConversationManager`
// - conversationmanager/init(configuration:): `convenience init(configuration:)`
// - conversationmanager/configuration-swift.struct/init(ringtoneName:iconTemplateImageData:
//   maximumConversationGroups:maximumConversationsPerConversationGroup:
//   includesConversationInRecents:supportsVideo:supportedHandleTypes:) (the parameter types
//   read from the page's symbol identifier: String?, Data?, Int, Int, Bool, Bool,
//   Set<Handle.Kind>)
// - conversationmanager/delegate: `weak final var delegate: (any ConversationManagerDelegate)?`
// - conversationmanager/conversations: `final var conversations: [Conversation] { get }`
// - conversationmanager/reportnewincomingconversation(uuid:update:): `async throws`
// - conversationmanager/reportconversationevent(_:for:): takes a `Conversation`, not a UUID
// - conversationmanager/perform(_:): `final func perform(_ actions: [ConversationAction]) async throws`
// - conversation (`let uuid: UUID`), conversation/event (`conversationStartedConnecting(Date)`,
//   `conversationConnected(Date)`, `conversationEnded(Date, Conversation.EndedReason)`),
//   conversation/endedreason (`failed`, `remoteEnded`, `unanswered`, `joinedElsewhere`,
//   `declinedElsewhere`)
// - conversation/update/init(localMember:members:activeRemoteMembers:capabilities:), every
//   argument optional, `nil` meaning "no change"
// - conversation/capabilities: an option set; `video` is listed in the SDK interface mirror at
//   onestack.dev/ios-reference/LiveCommunicationKit/Conversation.Capabilities (Apple's page as
//   stored here was cut off before it)
// - handle/init(type:value:displayName:), handle/kind/generic, handle (`var value: String`)
// - conversationaction (`conversationUUID`, `fulfill()`, `fail()`)
// - startconversationaction (`init(conversationUUID:handles:isVideo:)`, `handles`, `isVideo`,
//   `fulfill(dateStarted:)`), joinconversationaction (`init(conversationUUID:)`,
//   `fulfill(dateConnected:)`), endconversationaction (`init(conversationUUID:)`,
//   `fulfill(dateEnded:)`)
// - conversationmanagerdelegate: `conversationManagerDidBegin(_:)`,
//   `conversationManagerDidReset(_:)`, `conversationManager(_:conversationChanged:)`,
//   `conversationManager(_:perform:)`, `conversationManager(_:didActivate:)`,
//   `conversationManager(_:didDeactivate:)` (AVAudioSession)
//
// Availability is the pages' own: iOS/iPadOS/Mac Catalyst 17.4, visionOS 1.1, watchOS 10.4.
// They list no macOS, so a macOS SDK that ships the module does not build this file.
//
// Left out because the documentation did not confirm them (see docs/push-and-callkit.md):
// - a timed-out callback on the delegate (CallKit's `provider(_:timedOutPerforming:)`): the
//   protocol's page, as found, lists no such method. If the SDK declares one as a
//   requirement, conformance fails to compile and it must be added here.
// - LiveCommunicationKit's error type and codes: no page for them was found, so a refused
//   report is `SystemCallError(.unknown, ...)` except a duplicate UUID, which is detected
//   here from `conversations` before reporting.
// - the queue the manager calls its delegate on (no `setDelegate(_:queue:)` is documented):
//   every delegate call is moved onto this adapter's own serial queue, as the
//   `SystemCallProvider` contract asks.
// - whether `ConversationManager`, `Conversation` and the actions are `Sendable` or bound to
//   an actor: not documented, hence `@unchecked Sendable` and `nonisolated(unsafe)` below.
public import Foundation
@_spi(ParleyEngines) public import ParleySDKCore
public import LiveCommunicationKit
public import AVFoundation

/// `SystemCallProvider` over LiveCommunicationKit's `ConversationManager` (iOS 17.4+), the
/// alternative to `CallKitSystemCallProvider`: reports go to the manager, requests become
/// `ConversationAction`s it performs, and its delegate callbacks become
/// `SystemCallProviderDelegate` calls on a serial queue of this adapter. Not compiled on
/// Linux; type-checked against a mirror by AppleCheck/ (docs/push-and-callkit.md).
@available(iOS 17.4, macCatalyst 17.4, visionOS 1.1, watchOS 10.4, *)
public final class LiveCommunicationKitSystemCallProvider: SystemCallProvider, ConversationManagerDelegate, @unchecked Sendable {
    // @unchecked: `delegateSlot` is `Locked`; `manager` is only used through its documented
    // methods, whose thread-safety Apple does not state (see the header).
    private let manager: ConversationManager
    private let queue: DispatchQueue
    private let delegateSlot = Locked(WeakReference())

    /// A provider for one call at a time with `.generic` handles, as the CallKit adapter
    /// configures CallKit; delegate calls arrive on `queue`.
    public init(ringtoneName: String? = nil, iconTemplateImageData: Data? = nil, supportsVideo: Bool = false,
                includesConversationInRecents: Bool = true,
                queue: DispatchQueue = DispatchQueue(label: "parley.livecommunicationkit")) {
        let configuration = ConversationManager.Configuration(
            ringtoneName: ringtoneName,
            iconTemplateImageData: iconTemplateImageData,
            maximumConversationGroups: 1,
            maximumConversationsPerConversationGroup: 1,
            includesConversationInRecents: includesConversationInRecents,
            supportsVideo: supportsVideo,
            supportedHandleTypes: [.generic])
        manager = ConversationManager(configuration: configuration)
        self.queue = queue
        manager.delegate = self
    }

    public func setDelegate(_ delegate: any SystemCallProviderDelegate) {
        delegateSlot.withLock { $0.object = delegate }
    }

    private var delegate: (any SystemCallProviderDelegate)? { delegateSlot.current.object as? any SystemCallProviderDelegate }

    public func reportNewIncomingCall(with uuid: UUID, update: SystemCallUpdate, completion: @escaping @Sendable ((any Error)?) -> Void) {
        // iOS wants every VoIP push reported; a repeat under the same UUID is refused the way
        // CallKit refuses it, so the integration's duplicate handling stays the same.
        if conversation(uuid) != nil {
            return completion(SystemCallError(.callUUIDAlreadyExists, "a conversation with UUID \(uuid) exists"))
        }
        // Whether `Conversation.Update` is Sendable is not documented.
        nonisolated(unsafe) let conversationUpdate = Self.conversationUpdate(update)
        Task {
            do {
                try await self.manager.reportNewIncomingConversation(uuid: uuid, update: conversationUpdate)
                completion(nil)
            } catch {
                completion(SystemCallError(.unknown, "\(error)"))
            }
        }
    }

    public func reportOutgoingCall(with uuid: UUID, startedConnectingAt date: Date) {
        report(.conversationStartedConnecting(date), uuid)
    }

    public func reportOutgoingCall(with uuid: UUID, connectedAt date: Date) {
        report(.conversationConnected(date), uuid)
    }

    public func reportCall(with uuid: UUID, endedAt date: Date, reason: SystemCallEndReason) {
        let mapped: Conversation.EndedReason = switch reason {
        case .failed: .failed
        case .remoteEnded: .remoteEnded
        case .unanswered: .unanswered
        case .answeredElsewhere: .joinedElsewhere
        case .declinedElsewhere: .declinedElsewhere
        }
        report(.conversationEnded(date, mapped), uuid)
    }

    public func request(_ kind: SystemCallAction.Kind, callUUID: UUID, completion: @escaping @Sendable ((any Error)?) -> Void) {
        let action: ConversationAction
        switch kind {
        case .start(let handle, let video):
            action = StartConversationAction(conversationUUID: callUUID, handles: [Handle(type: .generic, value: handle)], isVideo: video)
        case .answer: action = JoinConversationAction(conversationUUID: callUUID)
        case .end: action = EndConversationAction(conversationUUID: callUUID)
        case .setHeld, .setMuted:
            // Mute and pause are not translated for LiveCommunicationKit yet (docs/push-and-callkit.md).
            completion(SystemCallError(.unknown, "hold and mute are not translated for LiveCommunicationKit"))
            return
        }
        nonisolated(unsafe) let unsafeAction = action
        Task {
            do {
                try await self.manager.perform([unsafeAction])
                completion(nil)
            } catch {
                completion(SystemCallError(.unknown, "\(error)"))
            }
        }
    }

    // MARK: ConversationManagerDelegate

    public func conversationManagerDidBegin(_ manager: ConversationManager) {}

    public func conversationManagerDidReset(_ manager: ConversationManager) {
        queue.async { self.delegate?.providerDidReset() }
    }

    // The integration learns of changes from the calls themselves, not from the system.
    public func conversationManager(_ manager: ConversationManager, conversationChanged conversation: Conversation) {}

    public func conversationManager(_ manager: ConversationManager, perform action: ConversationAction) {
        nonisolated(unsafe) let unsafeAction = action
        queue.async { self.hand(unsafeAction) }
    }

    public func conversationManager(_ manager: ConversationManager, didActivate audioSession: AVAudioSession) {
        queue.async { self.delegate?.didActivateAudioSession() }
    }

    public func conversationManager(_ manager: ConversationManager, didDeactivate audioSession: AVAudioSession) {
        queue.async { self.delegate?.didDeactivateAudioSession() }
    }

    // MARK: Translation

    private func hand(_ action: ConversationAction) {
        let kind: SystemCallAction.Kind
        if let start = action as? StartConversationAction {
            // Parley calls one user; a start without a handle has no one to call.
            guard let handle = start.handles.first else { return action.fail() }
            kind = .start(handle: handle.value, video: start.isVideo)
        } else if action is JoinConversationAction {
            kind = .answer
        } else if action is EndConversationAction {
            kind = .end
        } else {
            // Mute, pause, tones, merging: the integration does not take them (see
            // docs/push-and-callkit.md), so the system is told they failed.
            return action.fail()
        }
        guard let delegate else { return action.fail() }
        nonisolated(unsafe) let unsafeAction = action
        delegate.perform(SystemCallAction(kind: kind, callUUID: action.conversationUUID) { outcome in
            Self.complete(unsafeAction, outcome)
        })
    }

    /// Fulfils with the subclass's dated variant, which records when the call started,
    /// connected or ended.
    private static func complete(_ action: ConversationAction, _ outcome: SystemCallAction.Outcome) {
        guard outcome == .fulfilled else { return action.fail() }
        let now = Date()
        if let start = action as? StartConversationAction {
            start.fulfill(dateStarted: now)
        } else if let join = action as? JoinConversationAction {
            join.fulfill(dateConnected: now)
        } else if let end = action as? EndConversationAction {
            end.fulfill(dateEnded: now)
        } else {
            action.fulfill()
        }
    }

    private func conversation(_ uuid: UUID) -> Conversation? {
        manager.conversations.first { $0.uuid == uuid }
    }

    /// Reports `event` for the conversation `uuid`; a conversation the system no longer has
    /// (it ended or was reset) has nothing left to update, so the event is dropped.
    private func report(_ event: Conversation.Event, _ uuid: UUID) {
        guard let conversation = conversation(uuid) else { return }
        manager.reportConversationEvent(event, for: conversation)
    }

    private static func conversationUpdate(_ update: SystemCallUpdate) -> Conversation.Update {
        let remote = Handle(type: .generic, value: update.remoteHandle, displayName: update.localizedCallerName)
        return Conversation.Update(members: [remote],
                                   capabilities: update.hasVideo ? [.video] : [])
    }
}
#endif
