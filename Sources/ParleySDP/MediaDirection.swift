/// `a=sendrecv`, `a=sendonly`, `a=recvonly`, `a=inactive` (RFC 8866 §6.7), always from
/// the point of view of the side that wrote it.
public enum MediaDirection: String, Sendable, Hashable, Encodable, CaseIterable {
    case sendrecv, sendonly, recvonly, inactive

    /// Builds the direction from its two halves.
    public init(sends: Bool, receives: Bool) {
        switch (sends, receives) {
        case (true, true): self = .sendrecv
        case (true, false): self = .sendonly
        case (false, true): self = .recvonly
        case (false, false): self = .inactive
        }
    }

    public var sends: Bool { self == .sendrecv || self == .sendonly }
    public var receives: Bool { self == .sendrecv || self == .recvonly }

    /// The same stream seen from the other side.
    public var reversed: MediaDirection { MediaDirection(sends: receives, receives: sends) }

    /// RFC 3264 §6.1: the answer to an offered direction, given what the answerer
    /// wants (`local`): it sends only if the offerer receives, and receives only if
    /// the offerer sends.
    ///
    /// | offer    | answer (answerer wants sendrecv) |
    /// |----------|----------------------------------|
    /// | sendonly | recvonly                         |
    /// | recvonly | sendonly                         |
    /// | sendrecv | sendrecv                         |
    /// | inactive | inactive                         |
    public func answer(wanting local: MediaDirection) -> MediaDirection {
        MediaDirection(sends: local.sends && receives, receives: local.receives && sends)
    }

    /// The attribute that writes this direction.
    public var attribute: SDPAttribute { SDPAttribute(name: rawValue) }
}
