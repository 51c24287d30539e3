/// One end of a call that the engine talks to: what a notification goes to and what a
/// callee leg is named by.
///
/// Devices and SIP callees are built. A conference room becomes a case here with its own
/// adapter (the way `DeviceAdapter` renders notifications as signaling frames, and the SIP
/// user agent behind ParleyServer's `SIPCallPort` renders a SIP callee's as INVITE,
/// CANCEL and BYE); until then a router decision that needs one is refused with
/// `not_implemented` (`RoutingDecision`).
public enum Party: Sendable, Hashable, CustomStringConvertible {
    /// An app installation with a signaling session (`hello`): told through frames.
    case device(Device)
    /// A SIP endpoint or a phone number a call dials: told through the SIP user agent.
    case sip(SIPParty)

    /// The device, for a device party.
    public var device: Device? {
        switch self {
        case .device(let device): device
        case .sip: nil
        }
    }

    /// The SIP leg, for a SIP party.
    public var sip: SIPParty? {
        switch self {
        case .device: nil
        case .sip(let party): party
        }
    }

    public var description: String {
        switch self {
        case .device(let device): device.description
        case .sip(let party): party.description
        }
    }
}
