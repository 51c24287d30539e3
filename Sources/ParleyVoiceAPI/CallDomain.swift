/// Which network a call leg is on: the `domain` and `originationType` of ICE.
public enum CallDomain: String, Sendable, Hashable, CaseIterable {
    /// The phone network, through a SIP trunk.
    case pstn
    /// An app of the platform (Sinch's name for its in-app calling: "MXP").
    case mxp
    /// A SIP peer or trunk addressed by SIP URI.
    case sip
}
