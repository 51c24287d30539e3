import Synchronization

/// What the capture source and the playback sink share: opening the PCM on `start()`,
/// the device thread's lifetime, its stop flag and the error that ended it.
final class DeviceRunner: Sendable {
    let device: String
    let direction: ALSAPCM.Direction
    let definitions: String?
    let bufferPeriods: Int
    /// Set by `stop()`; the device loop checks it at least every 100 ms.
    let stopRequested = Atomic<Bool>(false)
    /// xruns recovered, copied from the PCM by the device loop (which alone may read it).
    let xrunsRecovered = Atomic<Int>(0)
    private let lastFailure = Mutex<ALSAError?>(nil)
    /// The running thread; held while starting and stopping, so concurrent calls take turns.
    private let thread = Mutex<DeviceThread?>(nil)

    init(device: String, direction: ALSAPCM.Direction, definitions: String?, bufferPeriods: Int) {
        self.device = device
        self.direction = direction
        self.definitions = definitions
        self.bufferPeriods = max(2, bufferPeriods)
    }

    var isRunning: Bool { thread.withLock { $0 != nil } }
    var failure: ALSAError? { lastFailure.withLock { $0 } }

    /// Opens the PCM here, on the caller's thread (so a bad device throws now), then runs
    /// `loop` with it on a new thread until it returns or throws; the PCM is closed when
    /// the loop ends. `opened` runs once the PCM is open, before the thread starts. Does
    /// nothing if already running.
    func start(threadName: String, opened: () -> Void, loop: @escaping @Sendable (ALSAPCM) throws(ALSAError) -> Void) throws(ALSAError) {
        try thread.withLock { (running: inout DeviceThread?) throws(ALSAError) in
            guard running == nil else { return }
            let pcm = try ALSAPCM(device: device, direction: direction, definitions: definitions, bufferPeriods: bufferPeriods)
            opened()
            stopRequested.store(false, ordering: .releasing)
            xrunsRecovered.store(0, ordering: .relaxed)
            lastFailure.withLock { $0 = nil }
            let handover = Handover(pcm)
            running = try DeviceThread(name: threadName, device: device) { [self] in
                // The PCM lives exactly as long as this closure's frame: closed on return.
                let pcm = handover.take()
                do throws(ALSAError) {
                    try loop(pcm)
                } catch {
                    lastFailure.withLock { $0 = error }
                }
                xrunsRecovered.store(pcm.xrunsRecovered, ordering: .relaxed)
            }
        }
    }

    /// Asks the loop to end, waits for its thread (at most about 100 ms plus one frame)
    /// and so for the PCM to close. Harmless when not running.
    func stop() {
        thread.withLock { running in
            guard let current = running else { return }
            stopRequested.store(true, ordering: .releasing)
            current.join()
            running = nil
        }
    }

    var shouldStop: Bool { stopRequested.load(ordering: .acquiring) }
}
