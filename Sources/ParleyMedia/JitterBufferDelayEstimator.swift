/// The target playout delay of a `JitterBuffer`, estimated from the spread of packet
/// delays over a sliding window.
///
/// Each packet contributes its relative delay `r = arrival - timestamp` (both in
/// nanoseconds; the unknown offset between the sender's and our clocks is the same for
/// every packet, so it cancels when packets are compared). The fastest packet in the
/// window is the baseline. A packet with relative delay `r` is on time when the buffer
/// plays `r - baseline` or more behind that baseline, so the target is a high
/// percentile of `r - baseline`, clamped to the configured bounds.
///
/// Grows fast: a packet slower than the current target triggers a re-estimate at once.
/// Shrinks slowly: the estimate is refreshed every `updateInterval` packets and each
/// refresh lowers the target by at most `shrinkStep`.
struct JitterBufferDelayEstimator: Sendable, Hashable {
    let windowSize: Int
    /// Percentile in per-mille (980 = 98th percentile).
    let percentilePerMille: Int
    let minimum: Int64
    let maximum: Int64
    let shrinkStep: Int64
    let updateInterval: Int

    /// Relative delays, a ring of at most `windowSize` entries.
    private var window: [Int64] = []
    private var nextSlot = 0
    /// Reused sort buffer, so re-estimating allocates nothing once warm.
    private var scratch: [Int64] = []
    private var sinceUpdate = 0
    /// The smallest relative delay in the window (refreshed on each re-estimate, lowered
    /// at once by a faster packet).
    private(set) var baseline: Int64?
    private(set) var target: Int64

    init(windowSize: Int, percentilePerMille: Int, minimum: Int64, maximum: Int64, shrinkStep: Int64, updateInterval: Int) {
        self.windowSize = max(windowSize, 1)
        self.percentilePerMille = min(max(percentilePerMille, 0), 1000)
        self.minimum = max(minimum, 0)
        self.maximum = max(maximum, self.minimum)
        self.shrinkStep = max(shrinkStep, 0)
        self.updateInterval = max(updateInterval, 1)
        target = self.minimum
        window.reserveCapacity(self.windowSize)
        scratch.reserveCapacity(self.windowSize)
    }

    /// Accounts for one packet's relative delay.
    mutating func add(_ relativeDelay: Int64) {
        if window.count < windowSize {
            window.append(relativeDelay)
        } else {
            window[nextSlot] = relativeDelay
            nextSlot = (nextSlot + 1) % windowSize
        }
        let base = min(baseline ?? relativeDelay, relativeDelay)
        baseline = base
        sinceUpdate += 1
        if sinceUpdate >= updateInterval || relativeDelay.subtractingReportingOverflow(base).partialValue > target {
            reestimate()
        }
    }

    private mutating func reestimate() {
        sinceUpdate = 0
        guard !window.isEmpty else { return }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: window)
        scratch.sort()
        let base = scratch[0]
        baseline = base
        let index = min(scratch.count - 1, ((scratch.count - 1) * percentilePerMille + 500) / 1000)
        let spread = scratch[index].subtractingReportingOverflow(base).partialValue
        let wanted = min(max(spread, minimum), maximum)
        target = wanted >= target ? wanted : max(wanted, target - shrinkStep)
    }

    /// Forgets the window (a new stream), keeping the target: the network path is
    /// probably the same.
    mutating func clearWindow() {
        window.removeAll(keepingCapacity: true)
        nextSlot = 0
        sinceUpdate = 0
        baseline = nil
    }
}
