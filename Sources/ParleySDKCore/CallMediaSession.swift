/// One call's media as the client drives it: the engine's `ParleyCallMedia` with its
/// work run one step after another (so a close never overtakes the offer it follows).
final class CallMediaSession: @unchecked Sendable {
    // @unchecked: `lastTask` is touched only on the client's work queue (in `enqueue`);
    // the rest is immutable or `Locked`.
    let callID: String
    let media: any ParleyCallMedia
    private let closed = Locked(false)
    private var lastTask: Task<Void, Never>?
    /// DTMF runs in a chain of its own: tones go out in the order asked, and a long run
    /// never holds up the leg's close behind it (workQueue only, like `lastTask`).
    private var lastDTMF: Task<Void, Never>?

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

    /// Sends `tones` after the tones asked for before.
    func sendDTMF(_ tones: String) {
        let previous = lastDTMF
        lastDTMF = Task { [media] in
            await previous?.value
            _ = await media.sendDTMF(tones)
        }
    }

    /// Closes the media; returns its last statistics (nil if no leg was made).
    func close() async -> ParleyCallStatistics? {
        closed.withLock { $0 = true }
        return await media.close()
    }
}
