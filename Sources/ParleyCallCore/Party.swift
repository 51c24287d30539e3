/// One end of a call that the engine talks to: what a notification goes to and what a
/// callee leg is named by.
///
/// Only devices are built. A SIP endpoint or a PSTN number reached through a trunk, and a
/// conference room, become cases here with their own adapter (the way `DeviceAdapter`
/// renders notifications as signaling frames, a SIP adapter renders them as 180/183/200/BYE);
/// until then a router decision that needs one is refused with `not_implemented`
/// (`RoutingDecision`).
public enum Party: Sendable, Hashable, CustomStringConvertible {
    /// An app installation with a signaling session (`hello`): told through frames.
    case device(Device)

    /// The device, for a device party.
    public var device: Device? {
        switch self {
        case .device(let device): device
        }
    }

    public var description: String {
        switch self {
        case .device(let device): device.description
        }
    }
}
