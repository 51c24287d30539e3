/// The bounded queue between a device thread and the media pacer: 20 ms frames, oldest
/// first. When full, a push drops the oldest frame, because for live audio the newest is
/// the one worth keeping (a late frame only adds delay).
struct FrameQueue {
    let capacity: Int
    private var frames: [[Int16]] = []

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        frames.reserveCapacity(self.capacity)
    }

    var count: Int { frames.count }

    /// Appends `frame`; returns true if the oldest frame was dropped to make room.
    mutating func push(_ frame: [Int16]) -> Bool {
        let full = frames.count >= capacity
        // The queue holds a handful of frames, so shifting them is cheaper than a ring's
        // bookkeeping.
        if full { frames.removeFirst() }
        frames.append(frame)
        return full
    }

    mutating func pop() -> [Int16]? {
        frames.isEmpty ? nil : frames.removeFirst()
    }

    mutating func removeAll() {
        frames.removeAll(keepingCapacity: true)
    }
}
