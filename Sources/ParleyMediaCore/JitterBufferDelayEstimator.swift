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

    /// Relative delays in arrival order, a ring of at most `windowSize` entries.
    private var window: [Int64] = []
    private var nextSlot = 0
    /// The same values kept sorted, so the baseline and percentile are O(1) lookups and
    /// each packet costs one binary search and one short move.
    private var sorted: [Int64] = []
    private var sinceUpdate = 0
    private(set) var target: Int64
    /// A least target set from outside (`setFloor`), 0 when none.
    private(set) var floor: Int64 = 0

    /// The smallest relative delay in the window.
    var baseline: Int64? { sorted.first }

    init(windowSize: Int, percentilePerMille: Int, minimum: Int64, maximum: Int64, shrinkStep: Int64, updateInterval: Int) {
        self.windowSize = max(windowSize, 1)
        self.percentilePerMille = min(max(percentilePerMille, 0), 1000)
        self.minimum = max(minimum, 0)
        self.maximum = max(maximum, self.minimum)
        self.shrinkStep = max(shrinkStep, 0)
        self.updateInterval = max(updateInterval, 1)
        target = self.minimum
        window.reserveCapacity(self.windowSize)
        sorted.reserveCapacity(self.windowSize + 1)
    }

    /// Accounts for one packet's relative delay.
    mutating func add(_ relativeDelay: Int64) {
        if window.count < windowSize {
            window.append(relativeDelay)
        } else {
            let oldest = window[nextSlot]
            window[nextSlot] = relativeDelay
            nextSlot = (nextSlot + 1) % windowSize
            sorted.remove(at: lowerBound(oldest))
        }
        sorted.insert(relativeDelay, at: lowerBound(relativeDelay))
        sinceUpdate += 1
        let spread = relativeDelay.subtractingReportingOverflow(sorted[0]).partialValue
        if sinceUpdate >= updateInterval || spread > target {
            reestimate()
        }
    }

    private mutating func reestimate() {
        sinceUpdate = 0
        guard let base = sorted.first else { return }
        let index = min(sorted.count - 1, ((sorted.count - 1) * percentilePerMille + 500) / 1000)
        let spread = sorted[index].subtractingReportingOverflow(base).partialValue
        let wanted = min(max(spread, minimum, floor), maximum)
        target = wanted >= target ? wanted : max(wanted, target - shrinkStep)
    }

    /// Sets the least target: raised at once when above the current one, and when lowered
    /// the target comes down through the usual shrink steps.
    mutating func setFloor(_ value: Int64) {
        floor = min(max(value, 0), maximum)
        if target < floor { target = floor }
    }

    private func lowerBound(_ value: Int64) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let mid = (low + high) / 2
            if sorted[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Forgets the window (a new stream), keeping the target: the network path is
    /// probably the same.
    mutating func clearWindow() {
        window.removeAll(keepingCapacity: true)
        sorted.removeAll(keepingCapacity: true)
        nextSlot = 0
        sinceUpdate = 0
    }
}
