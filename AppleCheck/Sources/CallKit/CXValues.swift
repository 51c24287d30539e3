// MIRROR of Apple's CallKit, for type-checking Parley's Apple adapters on Linux and running
// the CallKit adapter's flows (AppleCheck/README.md). Only what ParleySDKApple and its tests
// use, each declaration written from the Apple page cited above it (developer.apple.com,
// /documentation/callkit/...); the behaviour follows those pages' discussions. Not Apple's
// code, and no substitute for a device: see docs/push-and-callkit.md.
//
// Sendability: Apple's pages show none of these classes as `Sendable`, so the mirror does
// not mark them (an adapter that sends one across threads must say so); the completion
// handlers are `@Sendable` because the pages show them so.
// Apple's framework modules export Foundation to their importers; so does the mirror.
@_exported import Foundation

// Follows cxhandle (`class CXHandle : NSObject`; `init(type: CXHandle.HandleType, value: String)`;
// `var type: CXHandle.HandleType { get }`; `var value: String { get }`) and
// cxhandle/handletype (`enum HandleType : Int`: generic = 1, phoneNumber, emailAddress).
/// A way to reach a call's other party.
open class CXHandle: NSObject {
    /// Kinds of handle.
    public enum HandleType: Int, Sendable {
        case generic = 1
        case phoneNumber = 2
        case emailAddress = 3
    }

    /// The kind.
    open private(set) var type: HandleType
    /// The handle itself.
    open private(set) var value: String

    /// A handle.
    public init(type: HandleType, value: String) {
        self.type = type
        self.value = value
    }
}

// Follows cxcallupdate (`class CXCallUpdate : NSObject`; `remoteHandle: CXHandle?`,
// `localizedCallerName: String?`, `supportsHolding`, `supportsGrouping`,
// `supportsUngrouping`, `supportsDTMF`, `hasVideo`, all `{ get set }`).
/// What the system shows for a call.
open class CXCallUpdate: NSObject {
    open var remoteHandle: CXHandle?
    open var localizedCallerName: String?
    open var supportsHolding = false
    open var supportsGrouping = false
    open var supportsUngrouping = false
    open var supportsDTMF = false
    open var hasVideo = false

    override public init() { super.init() }
}

// Follows cxproviderconfiguration: `init()` (iOS 14+); `convenience init(localizedName:)` and
// `var localizedName: String? { get }`, both deprecated in iOS 14 (read-only: the system
// shows the app's name); `ringtoneSound: String?`, `iconTemplateImageData: Data?`,
// `maximumCallGroups: Int`, `maximumCallsPerCallGroup: Int`, `includesCallsInRecents: Bool`,
// `supportsVideo: Bool`, `supportedHandleTypes: Set<CXHandle.HandleType>`, `{ get set }`.
// The deprecation is written as Apple's pages give it; Swift ignores `@available(iOS ...)`
// on Linux, so the mirror cannot report its use, only the read-only property.
/// How a provider's calls behave and look.
open class CXProviderConfiguration: NSObject {
    private var storedLocalizedName: String?
    @available(iOS, introduced: 10.0, deprecated: 14.0, message: "No longer supported")
    open var localizedName: String? { storedLocalizedName }
    open var ringtoneSound: String?
    open var iconTemplateImageData: Data?
    open var maximumCallGroups = 2
    open var maximumCallsPerCallGroup = 5
    open var includesCallsInRecents = true
    open var supportsVideo = false
    open var supportedHandleTypes: Set<CXHandle.HandleType> = []

    /// A configuration; the system shows the app's name.
    @available(iOS 14.0, *)
    override public init() { super.init() }

    /// A configuration naming the provider (before iOS 14).
    @available(iOS, introduced: 10.0, deprecated: 14.0, message: "No longer supported")
    public convenience init(localizedName: String) {
        self.init()
        storedLocalizedName = localizedName
    }
}

// Follows cxcallendedreason (`enum CXCallEndedReason : Int`: failed = 1, remoteEnded,
// unanswered, answeredElsewhere, declinedElsewhere).
/// Why a call ended, as reported by the app.
public enum CXCallEndedReason: Int, Sendable {
    case failed = 1
    case remoteEnded = 2
    case unanswered = 3
    case answeredElsewhere = 4
    case declinedElsewhere = 5
}

// Follows cxerrorcodeincomingcallerror-swift.struct and its Code page (`static var
// errorDomain: String`; codes unknown = 0, unentitled, callUUIDAlreadyExists,
// filteredByDoNotDisturb, filteredByBlockList, filteredDuringRestrictedSharingMode,
// callIsProtected, filteredBySensitiveParticipants). The numbers are those the
// Objective-C enum gives (code 4 is the block list, as Apple's forum thread 65144 shows
// with the domain "com.apple.CallKit.error.incomingcall"). On Apple platforms the error is
// an NSError bridged to this struct; here it is a `CustomNSError`, which bridges the same way.
/// Why the system refused to show an incoming call.
public struct CXErrorCodeIncomingCallError: CustomNSError, Hashable, Sendable {
    /// The reasons.
    public enum Code: Int, Sendable {
        case unknown = 0
        case unentitled = 1
        case callUUIDAlreadyExists = 2
        case filteredByDoNotDisturb = 3
        case filteredByBlockList = 4
        case filteredDuringRestrictedSharingMode = 5
        case callIsProtected = 6
        case filteredBySensitiveParticipants = 7
    }

    public static var errorDomain: String { "com.apple.CallKit.error.incomingcall" }
    /// The reason.
    public let code: Code
    public var errorCode: Int { code.rawValue }

    /// An error.
    public init(_ code: Code) { self.code = code }

    public static var unknown: Code { .unknown }
    public static var unentitled: Code { .unentitled }
    public static var callUUIDAlreadyExists: Code { .callUUIDAlreadyExists }
    public static var filteredByDoNotDisturb: Code { .filteredByDoNotDisturb }
    public static var filteredByBlockList: Code { .filteredByBlockList }
}

// Follows cxerrorcoderequesttransactionerror-swift.struct/code (unknown = 0, unentitled,
// unknownCallProvider, emptyTransaction, unknownCallUUID, callUUIDAlreadyExists,
// invalidAction, maximumCallGroupsReached, callIsProtected). Uncertain: the numbers are
// the cases' order on that page; the domain string is not on the page, and is the
// incoming-call one's pattern.
/// Why the system refused a transaction.
public struct CXErrorCodeRequestTransactionError: CustomNSError, Hashable, Sendable {
    /// The reasons.
    public enum Code: Int, Sendable {
        case unknown = 0
        case unentitled = 1
        case unknownCallProvider = 2
        case emptyTransaction = 3
        case unknownCallUUID = 4
        case callUUIDAlreadyExists = 5
        case invalidAction = 6
        case maximumCallGroupsReached = 7
        case callIsProtected = 8
    }

    public static var errorDomain: String { "com.apple.CallKit.error.requesttransaction" }
    /// The reason.
    public let code: Code
    public var errorCode: Int { code.rawValue }

    /// An error.
    public init(_ code: Code) { self.code = code }
}
