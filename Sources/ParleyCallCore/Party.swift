/// One end of a call that the engine talks to: what a notification goes to and what a
/// callee leg is named by.
///
/// Each kind has its adapter: `DeviceAdapter` renders a device's notifications as
/// signaling frames, the SIP user agent behind ParleyServer's `SIPCallPort` renders a SIP
/// callee's as INVITE, CANCEL and BYE, and a room needs none (it answers at once and its
/// media is the anchor's mixer: notifications to it are dropped).
public enum Party: Sendable, Hashable, CustomStringConvertible {
    /// An app installation with a signaling session (`hello`): told through frames.
    case device(Device)
    /// A SIP endpoint or a phone number a call dials: told through the SIP user agent.
    case sip(SIPParty)
    /// A conference room the call joins: answered at once, mixed by the media anchor.
    case room(RoomParty)

    /// The device, for a device party.
    public var device: Device? {
        switch self {
        case .device(let device): device
        case .sip, .room: nil
        }
    }

    /// The SIP leg, for a SIP party.
    public var sip: SIPParty? {
        switch self {
        case .device, .room: nil
        case .sip(let party): party
        }
    }

    /// The room, for a room party.
    public var room: RoomParty? {
        if case .room(let party) = self { return party }
        return nil
    }

    public var description: String {
        switch self {
        case .device(let device): device.description
        case .sip(let party): party.description
        case .room(let party): party.description
        }
    }
}
