/// Decides the Opus encoder's in-band FEC and expected loss from the loss the far end
/// reports about our stream (RTCP report blocks' fraction lost), as libwebrtc does: no FEC
/// on a clean path, where its bits would come out of the primary encoding; FEC planned for
/// about the measured loss when there is some.
///
/// The reports are smoothed (each moves the estimate `smoothing` of the way to the new
/// fraction), and FEC switches with hysteresis: on at `enableThreshold` or more, off below
/// `disableThreshold`, so a loss rate near one threshold does not make it flap.
public struct OpusLossProtection: Sendable, Hashable {
    /// Whether FEC may be used at all (`false`: never, whatever the reports say).
    public let allowed: Bool
    /// The highest expected loss the encoder is told, in percent.
    public let maximumExpectedLossPercent: Int
    /// Weight of a new report in the smoothed loss.
    public static let smoothing = 0.5
    /// Smoothed loss (fraction) at or above which FEC turns on: 1 %.
    public static let enableThreshold = 0.01
    /// Smoothed loss below which FEC turns off again: 0.5 %.
    public static let disableThreshold = 0.005

    /// The smoothed loss fraction (0...1), 0 before any report.
    public private(set) var smoothedLoss = 0.0
    /// Whether the encoder should send in-band FEC.
    public private(set) var inbandFEC = false
    /// The loss the encoder should plan for, in percent (0 while FEC is off).
    public private(set) var expectedLossPercent = 0

    /// - Parameters:
    ///   - allowed: false turns FEC off for good.
    ///   - maximumExpectedLossPercent: caps the expected loss (clamped to 0...100).
    public init(allowed: Bool, maximumExpectedLossPercent: Int) {
        self.allowed = allowed
        self.maximumExpectedLossPercent = min(max(maximumExpectedLossPercent, 0), 100)
    }

    /// Accounts for one report of the fraction of our packets the far end lost (0...1;
    /// RTCP's 8-bit fraction divided by 256). Returns true when `inbandFEC` or
    /// `expectedLossPercent` changed, so the encoder needs the new values.
    public mutating func report(fractionLost: Double) -> Bool {
        let fraction = fractionLost.isFinite ? min(max(fractionLost, 0), 1) : 0
        smoothedLoss += (fraction - smoothedLoss) * Self.smoothing
        let before = (inbandFEC, expectedLossPercent)
        if !allowed || maximumExpectedLossPercent == 0 {
            inbandFEC = false
        } else if inbandFEC {
            inbandFEC = smoothedLoss >= Self.disableThreshold
        } else {
            inbandFEC = smoothedLoss >= Self.enableThreshold
        }
        expectedLossPercent = inbandFEC
            ? min(max(Int((smoothedLoss * 100).rounded()), 1), maximumExpectedLossPercent) : 0
        return before != (inbandFEC, expectedLossPercent)
    }
}
