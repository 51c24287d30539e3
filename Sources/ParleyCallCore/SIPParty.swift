public import ParleyCallModel

/// The callee of a call placed to a SIP endpoint, or to a phone number through a SIP
/// trunk: the call's one outbound SIP leg (its INVITE). The engine names it in
/// notifications (`Party.sip`), in the callee leg's id, and the SIP side names it in its
/// reports (`CallInput.sip`, `CallRegistry.handleSIP`).
public struct SIPParty: Sendable, Hashable, CustomStringConvertible {
    /// Where the INVITE goes.
    public enum Destination: Sendable, Hashable {
        /// A SIP address (a router's `dialSIP`): a `sip:`/`sips:` URI, or
        /// `user@domain[:port][;transport=udp|tcp|tls]`.
        case uri(String)
        /// A phone number through a trunk, with the CLI to present (a router's `dialNumber`).
        case phone(PhoneRoute)
    }

    /// The call this leg belongs to.
    public var callID: String
    public var destination: Destination

    public init(callID: String, destination: Destination) {
        self.callID = callID
        self.destination = destination
    }

    /// The destination as a call record's callee: the number or the SIP address.
    public var address: PartyAddress {
        switch destination {
        case .uri(let uri): .sip(uri)
        case .phone(let route): .phone(route.number)
        }
    }

    /// The calling line identity a phone call presents; nil for a SIP address.
    public var cli: String? {
        if case .phone(let route) = destination { return route.callerID }
        return nil
    }

    public var description: String {
        switch destination {
        case .uri(let uri): "sip \(uri)"
        case .phone(let route): "phone \(route.number)" + (route.trunk.map { " via \($0)" } ?? "")
        }
    }
}
