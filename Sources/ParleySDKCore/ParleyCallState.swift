/// Where a call is in its life. Moves forward only.
public enum ParleyCallState: String, Sendable, Hashable, Comparable {
    /// Outgoing: being set up (offer made, server reaching the callee).
    case initiating
    /// Outgoing: a callee device rings. Incoming: ringing here.
    case ringing
    /// The callee answered; media is being connected.
    case answered
    /// Media flows both ways.
    case established
    /// Over; `ParleyCallDetails.endCause` says why.
    case ended

    private var rank: Int {
        switch self {
        case .initiating: 0
        case .ringing: 1
        case .answered: 2
        case .established: 3
        case .ended: 4
        }
    }

    /// Earlier states compare less.
    public static func < (a: Self, b: Self) -> Bool { a.rank < b.rank }
}
