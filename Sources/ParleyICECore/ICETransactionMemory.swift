internal import ParleySTUN

/// The transaction IDs of the checks an agent acted on, with the address each came from:
/// what tells a retransmission or a replay from a new check.
///
/// MESSAGE-INTEGRITY covers the transaction ID, so nobody without the password can make a
/// valid check with a new one; a captured check can only be sent again as it is. A real
/// network change therefore always shows a transaction ID never seen before. Bounded in
/// count and in age: the oldest entry goes first when `capacity` is reached, and entries
/// older than `lifetime` are forgotten. Sans-I/O: time is an argument.
struct ICETransactionMemory: Sendable {
    private struct Entry: Sendable {
        var id: STUNTransactionID
        var at: ICEInstant
    }

    /// Entries at most.
    let capacity: Int
    /// How long an entry is kept.
    let lifetime: Duration

    /// A ring in arrival order: the oldest entry is at `oldest`, and `entries` never grows
    /// past `capacity`.
    private var entries: [Entry] = []
    private var oldest = 0
    /// Where each remembered ID came from.
    private var sources: [STUNTransactionID: ICETransportAddress] = [:]

    /// - Parameters:
    ///   - capacity: entries at most (at least 1).
    ///   - lifetime: how long an entry is kept.
    init(capacity: Int, lifetime: Duration) {
        self.capacity = max(1, capacity)
        self.lifetime = lifetime
    }

    /// How many IDs are remembered now.
    var count: Int { sources.count }

    /// The address `id` first came from, if it is still remembered at `now`.
    mutating func source(of id: STUNTransactionID, now: ICEInstant) -> ICETransportAddress? {
        forgetExpired(now: now)
        return sources[id]
    }

    /// Remembers `id` as first seen from `source` at `now`; an ID already remembered keeps
    /// its first source and time.
    mutating func remember(_ id: STUNTransactionID, from source: ICETransportAddress, now: ICEInstant) {
        forgetExpired(now: now)
        guard sources[id] == nil else { return }
        if sources.count == capacity { forgetOldest() }
        let entry = Entry(id: id, at: now)
        if entries.count < capacity {
            entries.append(entry)
        } else {
            // The ring is full of slots; the one after the newest entry is free.
            entries[(oldest + sources.count) % capacity] = entry
        }
        sources[id] = source
    }

    private mutating func forgetExpired(now: ICEInstant) {
        // Bounded by the entries held: each pass forgets one.
        while !sources.isEmpty, now - entries[oldest].at >= lifetime { forgetOldest() }
    }

    private mutating func forgetOldest() {
        guard !sources.isEmpty else { return }
        sources[entries[oldest].id] = nil
        if sources.isEmpty {
            entries.removeAll(keepingCapacity: true)
            oldest = 0
        } else {
            oldest = (oldest + 1) % entries.count
        }
    }
}
