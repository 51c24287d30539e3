import Glibc
import Synchronization

// Short calls through parleyd's gateway (the `setups` row of the `sip` group): a few app
// devices place calls at a steady low rate, each set up to call.established, held (or not)
// and hung up, so parleyd's CPU per call is what a call costs it from call.start to the
// BYE's 200: the app's WebSocket signaling, its leg's ICE-lite and DTLS-SRTP handshake, the
// INVITE transaction, ACK, BYE, the call's records in SQLite, the logs, and the hold's media.

struct GatewaySetupRun {
    var calls = 0
    var failures = 0
    var firstFailure: String?
    /// call.start sent -> call.answered / call.established read, seconds.
    var startToAnswered: [Double] = []
    var startToEstablished: [Double] = []
    /// From the first call.start to the last hang-up.
    var callingSeconds = 0.0
    /// The CPU window: the calling seconds and half a second after, for the last records'
    /// writes and legs' goodbyes.
    var wallSeconds = 0.0
    var serverCPUSeconds = 0.0
    var serverIdleCores = 0.0
    var sippCPUSeconds = 0.0
    var benchCPUSeconds = 0.0
    /// The server's busiest threads over the run, in cores.
    var serverThreads = ""

    mutating func absorb(_ other: GatewaySetupRun) {
        calls += other.calls
        failures += other.failures
        firstFailure = firstFailure ?? other.firstFailure
        startToAnswered += other.startToAnswered
        startToEstablished += other.startToEstablished
    }

    /// parleyd's CPU above its idle level per call, seconds.
    var serverSecondsPerCall: Double {
        max(0, serverCPUSeconds - serverIdleCores * wallSeconds) / Double(max(calls, 1))
    }
}

private final class GatewaySetupTally: Sendable {
    let run = Mutex(GatewaySetupRun())
}

/// `callers` devices place calls for `seconds`, together at most `rate` calls per second
/// (each waits for its slot, `callers / rate` seconds apart, staggered), holding each for
/// `holdSeconds` once established.
func runGatewaySetups(server: ServerUnderTest, sipp: SIPpProcess, callers: Int, rate: Double, seconds: Double, holdSeconds: Double,
                      destination: GatewayDestination) -> GatewaySetupRun {
    guard let media = try? DeviceMedia() else {
        var run = GatewaySetupRun()
        run.failures = 1
        run.firstFailure = "cannot start the device event loops"
        return run
    }
    defer { media.shutdown() }
    let tally = GatewaySetupTally()
    let serverBox = HandOver(server)
    let idleBefore = server.cpuSeconds(), idleStart = wallSeconds()
    usleep(1_000_000)
    let idleCores = (server.cpuSeconds() - idleBefore) / (wallSeconds() - idleStart)
    let cpuBefore = server.cpuSeconds(), sippBefore = sipp.cpuSeconds()
    let threadsBefore = threadCPUSecondsByName(server.child.pid)
    let benchBefore = processCPUSeconds(getpid()) ?? .nan
    let start = wallSeconds()
    let end = start + seconds
    let interval = Double(callers) / rate
    runOnThreads(callers) { index in
        var run = GatewaySetupRun()
        do {
            let caller = try BenchDevice(address: serverBox.value.address, credentials: serverBox.value.credentials,
                                         user: "setup-\(index)", deviceID: "d")
            // Bounded by time and by count (one call per slot).
            let maximum = Int(seconds / interval) + 1
            var slot = start + Double(index) / rate
            for attempt in 0..<maximum where slot < end {
                let now = wallSeconds()
                if now < slot { usleep(UInt32((slot - now) * 1e6)) }
                guard wallSeconds() < end else { break }
                slot = max(slot + interval, wallSeconds())
                do {
                    let placed = try establishGatewayCall(caller: caller, media: media, legIndex: index * maximum + attempt, destination: destination)
                    run.startToAnswered.append(placed.answered)
                    run.startToEstablished.append(placed.established)
                    if holdSeconds > 0 { usleep(UInt32(holdSeconds * 1e6)) }
                    try hangUpGatewayCall(placed.call)
                    let leg = placed.call.leg
                    try? blockingAwait { await leg.close() }
                    run.calls += 1
                } catch {
                    run.failures += 1
                    if run.firstFailure == nil { run.firstFailure = "\(error)" }
                    // A failed call leaves the device's connection in an unknown state.
                    break
                }
            }
        } catch {
            run.failures += 1
            if run.firstFailure == nil { run.firstFailure = "\(error)" }
        }
        tally.run.withLock { $0.absorb(run) }
    }
    var run = tally.run.withLock { $0 }
    run.callingSeconds = wallSeconds() - start
    usleep(500_000)
    run.wallSeconds = wallSeconds() - start
    run.serverCPUSeconds = server.cpuSeconds() - cpuBefore
    run.serverIdleCores = idleCores
    run.sippCPUSeconds = sipp.cpuSeconds() - sippBefore
    run.serverThreads = busiestThreads(before: threadsBefore, after: threadCPUSecondsByName(server.child.pid), seconds: run.wallSeconds, count: 5)
    run.benchCPUSeconds = (processCPUSeconds(getpid()) ?? .nan) - benchBefore
    return run
}
