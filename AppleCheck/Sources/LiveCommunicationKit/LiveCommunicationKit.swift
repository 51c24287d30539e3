// MIRROR of Apple's LiveCommunicationKit (iOS 17.4+), for type-checking Parley's
// LiveCommunicationKit adapter on Linux (AppleCheck/README.md). Declarations only: nothing
// runs over this mirror (the manager accepts every report and performs nothing). Each
// declaration is written from the page cited above it (developer.apple.com,
// /documentation/livecommunicationkit/...). LiveCommunicationKit is a Swift framework, so
// its pages show its real conformances; where a page lists none (`Sendable` on the
// manager, conversations, updates, actions), the mirror declares none.
// Apple's framework modules export Foundation to their importers; so does the mirror.
@_exported import Foundation
public import AVFAudio

// Follows handle (`struct Handle`; `init(type: Handle.Kind, value: String,
// displayName: String? = nil)`; `var type`, `var value: String`, `var displayName: String`)
// and handle/kind (`enum Kind`: emailAddress, phoneNumber, generic; Hashable, Codable,
// RawRepresentable, Sendable). Uncertain: Kind's raw value type (not on the page; Int here).
/// A way to reach a participant.
public struct Handle: Hashable, Sendable {
    public enum Kind: Int, Hashable, Codable, Sendable {
        case generic, phoneNumber, emailAddress
    }

    public var type: Kind
    public var value: String
    public var displayName: String

    public init(type: Kind, value: String, displayName: String? = nil) {
        self.type = type
        self.value = value
        self.displayName = displayName ?? value
    }
}

// Follows conversation (`class Conversation`; `let uuid: UUID`), conversation/update
// (a struct; `init(localMember:members:activeRemoteMembers:capabilities:)`, every argument
// optional with nil meaning "no change"), conversation/capabilities (an option set; `video`
// from the SDK interface mirror at onestack.dev, Apple's page did not list it),
// conversation/event (`conversationStartedConnecting(Date)`, `conversationConnected(Date)`,
// `conversationEnded(Date, Conversation.EndedReason)`) and conversation/endedreason
// (`failed`, `remoteEnded`, `unanswered`, `joinedElsewhere`, `declinedElsewhere`).
// Uncertain: the element type of `members` and `activeRemoteMembers` (`Set<Handle>` here;
// the adapter passes an array literal, which either accepts) and the cases left out of Event.
/// A call, as the system knows it.
public final class Conversation {
    public let uuid: UUID

    init(uuid: UUID) { self.uuid = uuid }

    public struct Capabilities: OptionSet, Hashable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let video = Capabilities(rawValue: 1 << 0)
    }

    public struct Update {
        public var localMember: Handle?
        public var members: Set<Handle>?
        public var activeRemoteMembers: Set<Handle>?
        public var capabilities: Capabilities?

        public init(localMember: Handle? = nil, members: Set<Handle>? = nil, activeRemoteMembers: Set<Handle>? = nil,
                    capabilities: Capabilities? = nil) {
            self.localMember = localMember
            self.members = members
            self.activeRemoteMembers = activeRemoteMembers
            self.capabilities = capabilities
        }
    }

    public enum EndedReason: Hashable, Sendable {
        case failed, remoteEnded, unanswered, joinedElsewhere, declinedElsewhere
    }

    public enum Event {
        case conversationStartedConnecting(Date)
        case conversationConnected(Date)
        case conversationEnded(Date, EndedReason)
    }
}

// Follows conversationaction (`class ConversationAction`; `convenience init(conversationUUID:
// timeoutDate:)`; `final var conversationUUID: UUID { get }`, `final var uuid: UUID { get }`;
// `final func fulfill()`, `final func fail()`), startconversationaction (`final class`;
// `init(conversationUUID:handles:isVideo:)`; `let handles: [Handle]`, `let isVideo: Bool`;
// `func fulfill(dateStarted:)`), joinconversationaction (`final class`;
// `init(conversationUUID:)`; `func fulfill(dateConnected:)`) and endconversationaction
// (`final class`; `init(conversationUUID:)`; `func fulfill(dateEnded:)`).
/// Something the system or the app asks to be done to a conversation.
open class ConversationAction {
    public final let conversationUUID: UUID
    public final let uuid = UUID()
    public final let timeoutDate: Date

    public init(conversationUUID: UUID, timeoutDate: Date = Date(timeIntervalSinceNow: 30)) {
        self.conversationUUID = conversationUUID
        self.timeoutDate = timeoutDate
    }

    public final func fulfill() {}
    public final func fail() {}
}

public final class StartConversationAction: ConversationAction {
    public let handles: [Handle]
    public let isVideo: Bool

    public init(conversationUUID: UUID, handles: [Handle], isVideo: Bool) {
        self.handles = handles
        self.isVideo = isVideo
        super.init(conversationUUID: conversationUUID)
    }

    public func fulfill(dateStarted: Date) { fulfill() }
}

public final class JoinConversationAction: ConversationAction {
    public init(conversationUUID: UUID) { super.init(conversationUUID: conversationUUID) }
    public func fulfill(dateConnected: Date) { fulfill() }
}

public final class EndConversationAction: ConversationAction {
    public init(conversationUUID: UUID) { super.init(conversationUUID: conversationUUID) }
    public func fulfill(dateEnded: Date) { fulfill() }
}

// Follows conversationmanagerdelegate (`protocol ConversationManagerDelegate : AnyObject`;
// `conversationManagerDidBegin(_:)`, `conversationManagerDidReset(_:)`,
// `conversationManager(_:conversationChanged:)`, `conversationManager(_:perform:)`,
// `conversationManager(_:didActivate:)`, `conversationManager(_:didDeactivate:)`, all
// required as far as the pages show; no timed-out callback is listed).
public protocol ConversationManagerDelegate: AnyObject {
    func conversationManagerDidBegin(_ manager: ConversationManager)
    func conversationManagerDidReset(_ manager: ConversationManager)
    func conversationManager(_ manager: ConversationManager, conversationChanged conversation: Conversation)
    func conversationManager(_ manager: ConversationManager, perform action: ConversationAction)
    func conversationManager(_ manager: ConversationManager, didActivate audioSession: AVAudioSession)
    func conversationManager(_ manager: ConversationManager, didDeactivate audioSession: AVAudioSession)
}

// Follows conversationmanager (`final class ConversationManager`; `convenience
// init(configuration:)`; `final let configuration`; `weak final var delegate`;
// `final var conversations: [Conversation] { get }`; `final func
// reportNewIncomingConversation(uuid:update:) async throws`; `final func
// reportConversationEvent(_:for:)`; `final func perform(_ actions: [ConversationAction])
// async throws`) and conversationmanager/configuration-swift.struct
// (`init(ringtoneName:iconTemplateImageData:maximumConversationGroups:
// maximumConversationsPerConversationGroup:includesConversationInRecents:supportsVideo:
// supportedHandleTypes:)`; `supportedHandleTypes: Set<Handle.Kind>`).
public final class ConversationManager {
    public struct Configuration {
        public var ringtoneName: String?
        public var iconTemplateImageData: Data?
        public var maximumConversationGroups: Int
        public var maximumConversationsPerConversationGroup: Int
        public var includesConversationInRecents: Bool
        public var supportsVideo: Bool
        public var supportedHandleTypes: Set<Handle.Kind>

        public init(ringtoneName: String?, iconTemplateImageData: Data?, maximumConversationGroups: Int,
                    maximumConversationsPerConversationGroup: Int, includesConversationInRecents: Bool,
                    supportsVideo: Bool, supportedHandleTypes: Set<Handle.Kind>) {
            self.ringtoneName = ringtoneName
            self.iconTemplateImageData = iconTemplateImageData
            self.maximumConversationGroups = maximumConversationGroups
            self.maximumConversationsPerConversationGroup = maximumConversationsPerConversationGroup
            self.includesConversationInRecents = includesConversationInRecents
            self.supportsVideo = supportsVideo
            self.supportedHandleTypes = supportedHandleTypes
        }
    }

    public let configuration: Configuration
    public weak var delegate: (any ConversationManagerDelegate)?
    public private(set) var conversations: [Conversation] = []

    public init(configuration: Configuration) { self.configuration = configuration }

    public func reportNewIncomingConversation(uuid: UUID, update: Conversation.Update) async throws {}
    public func reportConversationEvent(_ event: Conversation.Event, for conversation: Conversation) {}
    public func perform(_ actions: [ConversationAction]) async throws {}
}
