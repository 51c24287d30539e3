public import ParleySignaling

/// An output of the call engine, in the order parleyd must perform them.
public enum CallAction: Sendable, Hashable {
    /// Send this message (encode it with `SignalingCodec.encode`) to this device's
    /// connection. If the device is not connected (a dropped connection awaiting resume),
    /// parleyd keeps or drops it as its session rules say.
    case send(Device, SignalingMessage)
    /// Perform this on the media anchor and report back with a `MediaEvent`.
    case media(MediaInstruction)
    /// The call's record changed: store this version (it replaces the previous one).
    case record(CallRecord)
}
