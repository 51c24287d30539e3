/// Watches a received stream's sequence numbers for loss that will make the sender turn
/// RED on (`RedundancyPolicy`, 1 % and more): two missing packets within the last 100
/// received. One stray loss on a clean path does not count; at 5 % loss it fires within
/// about a second, before the first RTCP report reaches the sender.
struct ArrivalLossWatch: Sendable, Hashable {
    /// Packets received within which two losses count.
    static let window = 100
    /// A forward jump larger than this is a restart or a long gap, not loss.
    static let largestGap = 50

    private var highest: UInt16?
    private var received = 0
    /// `received` at the most recent loss.
    private var lastLossAt: Int?

    /// Accounts for a received sequence number; true when it shows loss worth holding
    /// the buffer for (two losses within `window` packets, or two in a row).
    mutating func note(_ sequence: UInt16) -> Bool {
        received += 1
        guard let last = highest else {
            highest = sequence
            return false
        }
        let ahead = Int(Int16(bitPattern: sequence &- last))
        guard ahead > 0 else { return false }  // reordered or duplicate: not a loss
        highest = sequence
        let missing = ahead - 1
        guard missing > 0, ahead <= Self.largestGap else { return false }
        defer { lastLossAt = received }
        if missing >= 2 { return true }
        if let previous = lastLossAt, received - previous <= Self.window { return true }
        return false
    }
}
