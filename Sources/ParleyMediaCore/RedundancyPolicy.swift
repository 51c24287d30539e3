/// Decides how many earlier frames (RFC 2198 RED blocks) each outgoing packet carries,
/// from the loss the far end reports about our stream (RTCP fraction lost).
///
/// The first report is taken as it is (a lossy path is protected from the first report,
/// a second into a WebRTC call); later ones move the estimate half way, with hysteresis
/// so a loss rate near a threshold does not make it flap: one redundant frame from 1 %
/// smoothed loss, off again below 0.3 %; two from 6 %, back to one below 4 %. The
/// smoothing means a clean path must report a few clean intervals (a few seconds at a
/// WebRTC leg's 1 s reports) before RED turns off again.
public struct RedundancyPolicy: Sendable, Hashable {
    /// Whether RED was negotiated and may be sent at all.
    public let allowed: Bool
    /// Weight of a new report in the smoothed loss.
    public static let smoothing = 0.5
    /// Smoothed loss at or above which one redundant frame is sent: 1 %, where a lost
    /// frame heard as concealment already costs more than the bandwidth (PESQ-WB 3.38
    /// through parleyd at 1 % with concealment only, 3.9 at 5 % with RED).
    public static let enableThreshold = 0.01
    /// Smoothed loss below which redundancy stops.
    public static let disableThreshold = 0.003
    /// Smoothed loss at or above which two redundant frames are sent: at 6 % random loss
    /// two in a row go about once a second (0.36 % of frames), which one frame cannot mend.
    public static let deepThreshold = 0.06
    /// Smoothed loss below which two frames go back to one.
    public static let shallowThreshold = 0.04
    /// The most redundant frames a packet carries.
    public static let maximumDepth = 2

    /// The smoothed loss fraction (0...1), 0 before any report.
    public private(set) var smoothedLoss = 0.0
    /// Earlier frames each packet should carry: 0 (plain packets), 1 or 2.
    public private(set) var depth = 0
    /// Reports accounted for so far.
    public private(set) var reports = 0

    public init(allowed: Bool) {
        self.allowed = allowed
    }

    /// Accounts for one report of the fraction of our packets the far end lost (0...1).
    /// Returns true when `depth` changed.
    public mutating func report(fractionLost: Double) -> Bool {
        let fraction = fractionLost.isFinite ? min(max(fractionLost, 0), 1) : 0
        smoothedLoss += (fraction - smoothedLoss) * (reports == 0 ? 1 : Self.smoothing)
        reports += 1
        let before = depth
        guard allowed else { depth = 0; return before != depth }
        switch depth {
        case 0:
            depth = smoothedLoss >= Self.deepThreshold ? 2 : smoothedLoss >= Self.enableThreshold ? 1 : 0
        case 1:
            depth = smoothedLoss >= Self.deepThreshold ? 2 : smoothedLoss < Self.disableThreshold ? 0 : 1
        default:
            depth = smoothedLoss < Self.disableThreshold ? 0 : smoothedLoss < Self.shallowThreshold ? 1 : 2
        }
        return before != depth
    }
}
