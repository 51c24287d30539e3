public import ParleyCallModel

/// What the store keeps about a call: its two ends, its times and how it ended.
///
/// Both ends are addresses (`PartyAddress`) and `direction` names their kinds
/// (`direction.fits(caller:callee:)` holds): an app-to-app call joins two users, a call to
/// a phone number a user and a number, a call to a SIP endpoint a user and a SIP address;
/// a room will add a direction, not fields. A call to a phone number or SIP address also
/// keeps its INVITE's Call-ID and the status of the final response (`sipCallID`, `sipStatus`).
///
/// Times are wall-clock milliseconds since the Unix epoch. The engine emits a new version
/// (`CallAction.record`) whenever one of these fields changes; the last one has
/// `state == .ended`, an `endCause` and `times.endedTime`. The JSON form (`Codable`) spells
/// ids as the protocol does (`callId`, `callerDeviceId`, `answeredDeviceId`; addresses as
/// `{"kind": "user", "address": ...}`), other members by their names, the state, direction
/// and end cause as their strings, absent values omitted.
public struct CallRecord: Sendable, Hashable, Codable {
    /// The call's id (a lower-case UUID).
    public var callID: String
    /// The application both ends belong to.
    public var applicationKey: String
    /// The kinds of party the call joins.
    public var direction: CallDirection
    /// Who calls.
    public var caller: PartyAddress
    /// The caller's device, for a caller on the SDK (every caller today).
    public var callerDeviceID: String?
    /// Who is called: the destination of `call.start`.
    public var callee: PartyAddress
    /// The callee device that answered, once one did (nil when a SIP callee answered).
    public var answeredDeviceID: String?
    /// Custom headers of `call.start`.
    public var headers: [String: String]
    /// Whether the caller offered video.
    public var video: Bool
    /// Where the call is; `.ended` in the last version.
    public var state: CallState
    /// When the call started and reached each later point (`call.ended`'s `details`).
    public var times: CallTimes
    /// Why it ended; nil while in progress.
    public var endCause: CallEndCause?
    /// For `endCause == .error`: what failed, e.g. `destination_not_found`.
    public var error: CallError?
    /// For a call to a phone number or SIP address: the Call-ID of the gateway's INVITE,
    /// once it was sent.
    public var sipCallID: String?
    /// For such a call: the status of the INVITE's final response (200 when answered).
    public var sipStatus: Int?

    enum CodingKeys: String, CodingKey {
        case callID = "callId", applicationKey, direction, caller, callerDeviceID = "callerDeviceId", callee
        case answeredDeviceID = "answeredDeviceId", headers, video, state, times, endCause, error
        case sipCallID = "sipCallId", sipStatus
    }

    /// A record of a call just started (state `initiating`).
    public init(
        callID: String, applicationKey: String, direction: CallDirection, caller: PartyAddress, callerDeviceID: String?,
        callee: PartyAddress, headers: [String: String], video: Bool, startedTime: Int64
    ) {
        self.callID = callID
        self.applicationKey = applicationKey
        self.direction = direction
        self.caller = caller
        self.callerDeviceID = callerDeviceID
        self.callee = callee
        self.headers = headers
        self.video = video
        self.state = .initiating
        self.times = CallTimes(startedTime: startedTime)
    }

    /// A record of an app-to-app call `caller` just started to the user `callee` of the
    /// same application.
    public init(callID: String, from caller: Device, to callee: AppUser, headers: [String: String], video: Bool, startedTime: Int64) {
        self.init(
            callID: callID, applicationKey: caller.user.applicationKey, direction: .appToApp,
            caller: .user(caller.user.userID), callerDeviceID: caller.deviceID, callee: .user(callee.userID),
            headers: headers, video: video, startedTime: startedTime)
    }

    /// A record of a call `caller` just started to `destination` (`call.start`'s `to`),
    /// with the direction of the destination's kind: a user of the same application, a
    /// phone number, a SIP address or a conference room.
    public init(callID: String, from caller: Device, to destination: PartyAddress, headers: [String: String], video: Bool, startedTime: Int64) {
        let direction = CallDirection(fromUserTo: destination.kind)
        self.init(
            callID: callID, applicationKey: caller.user.applicationKey, direction: direction,
            caller: .user(caller.user.userID), callerDeviceID: caller.deviceID,
            callee: PartyAddress(kind: direction.calleeKind, address: destination.address),
            headers: headers, video: video, startedTime: startedTime)
    }

    /// Whether `user` is the callee of this call.
    public func isCallee(_ user: AppUser) -> Bool {
        applicationKey == user.applicationKey && callee == .user(user.userID)
    }

    /// The callee device that answered, as the party its leg is named by; nil before an
    /// answer, and for a SIP callee (see `isAnsweringLeg`).
    public var answeringParty: Party? {
        guard let answeredDeviceID, case .user(let userID) = callee else { return nil }
        return .device(Device(user: AppUser(applicationKey: applicationKey, userID: userID), deviceID: answeredDeviceID))
    }

    /// Whether `leg` is the leg of the callee that answered: the answering device's, or
    /// (a call to a phone number or SIP address, once answered) its one SIP leg. The store
    /// keeps that leg's row as the callee's.
    public func isAnsweringLeg(_ leg: CallLegID) -> Bool {
        switch leg {
        case .caller: false
        case .callee(.device(let device)): answeringParty == .device(device)
        case .callee(.sip(let party)): party.callID == callID && answeredDeviceID == nil && times.answeredTime != nil
        case .callee(.room): false  // a room has no leg
        }
    }

    /// The conference room the call takes part in: the callee of an app-to-conference call,
    /// the caller of a conference callout; nil for other calls.
    public var conferenceID: String? {
        switch (caller, callee) {
        case (_, .conference(let room)), (.conference(let room), _): room
        default: nil
        }
    }

    /// The app user a conference call seats in its room, and the device whose leg is in the
    /// mixer: the caller of an app-to-conference call, the callee that answered a conference
    /// callout (nil until one answered); nil for other calls.
    public var roomParticipant: Device? {
        switch (caller, callee) {
        case (.user(let userID), .conference):
            guard let callerDeviceID else { return nil }
            return Device(user: AppUser(applicationKey: applicationKey, userID: userID), deviceID: callerDeviceID)
        case (.conference, .user(let userID)):
            guard let answeredDeviceID else { return nil }
            return Device(user: AppUser(applicationKey: applicationKey, userID: userID), deviceID: answeredDeviceID)
        default:
            return nil
        }
    }

    /// Talk time in milliseconds: from establishment to the end (0 if never established).
    public var durationMillis: Int64? {
        guard let endedTime = times.endedTime else { return nil }
        guard let establishedTime = times.establishedTime else { return 0 }
        return max(0, endedTime - establishedTime)
    }
}
