/// One call's media as the client drives it: the engine's `ParleyCallMedia` with its
/// work run one step after another (so a close never overtakes the offer it follows).
final class CallMediaSession: @unchecked Sendable {
    // @unchecked: `lastTask` is touched only on the client's work queue (in `enqueue`);
    // the rest is immutable or `Locked`.
    let callID: String
    let media: any ParleyCallMedia
    private let closed = Locked(false)
    private var lastTask: Task<Void, Never>?

    init(callID: String, media: any ParleyCallMedia) {
        self.callID = callID
        self.media = media
    }

    var isClosed: Bool { closed.current }

    /// Runs `work` after the work enqueued before it.
    func enqueue(_ work: @escaping @Sendable (CallMediaSession) async -> Void) {
        let previous = lastTask
        lastTask = Task { [self] in
            await previous?.value
            await work(self)
        }
    }

    /// Closes the media; returns its last statistics (nil if no leg was made).
    func close() async -> ParleyCallStatistics? {
        closed.withLock { $0 = true }
        return await media.close()
    }
}
