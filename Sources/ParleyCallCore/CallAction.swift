public import ParleyCallModel
public import ParleySignaling

/// An output of the call engine, in the order parleyd must perform them.
public enum CallAction: Sendable, Hashable {
    /// Send this reply (`result` or `error` to a request) to this device's connection
    /// (encode it with `SignalingCodec.encode`). If the device is not connected (a dropped
    /// connection awaiting resume), parleyd keeps or drops it as its session rules say.
    case send(Device, SignalingMessage)
    /// Tell this party about the call. For a device, `DeviceAdapter.frame(for:)` is the
    /// frame to send, delivered like `send`.
    case notify(Party, CallNotification)
    /// Perform this on the media anchor and report back with a `MediaEvent`.
    case media(MediaInstruction)
    /// The call's record changed: store this version (it replaces the previous one).
    case record(CallRecord)
    /// Wake these devices by push (docs/push.md): sign a payload for each with its push
    /// key and send it through its providers. A device that answers relays the payload
    /// (`CallRegistry.relayPush`).
    case push(PushInstruction)
    /// A party's device reported its playout counters for its leg (`call.stats`): keep
    /// them on that leg of the call's record.
    case recordPlayout(callID: String, role: CallLegRole, CallLegPlayout)
}

/// The call a push announces: what goes into each device's signed payload.
public struct PushInstruction: Sendable, Hashable {
    public var callID: String
    /// The devices to wake, each with its own payload.
    public var devices: [Device]
    /// The caller as the push names it: a user of the application, or the conference room
    /// of a conference callout.
    public var from: PartyAddress
    public var headers: [String: String]
    public var video: Bool
    /// When the push is made, milliseconds since the epoch (the payload's `iat`).
    public var issuedTime: Int64
    /// When the call stops ringing (the payload's `exp`), milliseconds since the epoch.
    public var expiresTime: Int64
    /// The caller's display name, when it set one (the payload's `name`).
    public var callerDisplayName: String?

    public init(
        callID: String, devices: [Device], from: PartyAddress, headers: [String: String], video: Bool, issuedTime: Int64, expiresTime: Int64,
        callerDisplayName: String? = nil
    ) {
        self.callID = callID
        self.devices = devices
        self.from = from
        self.headers = headers
        self.video = video
        self.issuedTime = issuedTime
        self.expiresTime = expiresTime
        self.callerDisplayName = callerDisplayName
    }
}
