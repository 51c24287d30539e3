import Glibc
import Synchronization

// Memory per idle connected device (row 4 of the `server` group): `devices` connections,
// each authenticated with `hello` and then only sending `ping` every heartbeat, against a
// server with no other load. Memory is the server's resident set (VmRSS), which does not
// include the kernel's socket buffers.

struct IdleRun {
    let devices: Int
    let connected: Int
    let failures: Int
    let firstFailure: String?
    let connectSeconds: Double
    let residentBeforeKiB: Double
    let residentAfterKiB: Double
    let idleSeconds: Double
    let idleServerCPUSeconds: Double
    let pings: Int
    var kibPerDevice: Double { (residentAfterKiB - residentBeforeKiB) / Double(max(connected, 1)) }
}

private final class IdleState: Sendable {
    let connected = Atomic<Int>(0)
    let failures = Atomic<Int>(0)
    let pings = Atomic<Int>(0)
    let stop = Atomic<Bool>(false)
    let firstFailure = Mutex<String?>(nil)

    func fail(_ error: any Error) {
        failures.add(1, ordering: .relaxed)
        firstFailure.withLock { if $0 == nil { $0 = "\(error)" } }
    }
}

/// Connects `devices` devices from `threads` threads, keeps them alive for `idleSeconds`
/// and measures the server's memory and CPU.
func runIdleDevices(server: ServerUnderTest, devices: Int, idleSeconds: Double, threads: Int = 4) -> IdleRun {
    let state = IdleState()
    let address = server.address
    let credentials = server.credentials
    usleep(500_000)
    let residentBefore = server.residentKiB()
    let start = wallSeconds()
    // Connecting is bounded by this deadline, idling by `stop`.
    let connectDeadline = start + 180
    let group = DispatchGroupOfThreads()
    for thread in 0..<threads {
        group.start {
            var mine: [BenchDevice] = []
            for index in stride(from: thread, to: devices, by: threads) {
                guard wallSeconds() < connectDeadline else { break }
                do {
                    mine.append(try BenchDevice(address: address, credentials: credentials, user: "idle-\(index)", deviceID: "d"))
                    state.connected.add(1, ordering: .relaxed)
                } catch {
                    state.fail(error)
                }
            }
            // Heartbeats until told to stop (at most 10 minutes).
            for _ in 0..<2400 where !state.stop.load(ordering: .relaxed) {
                usleep(250_000)
                let now = ContinuousClock.now
                for device in mine {
                    do {
                        if try device.keepAlive(now: now) { state.pings.add(1, ordering: .relaxed) }
                    } catch {
                        state.fail(error)
                    }
                }
            }
        }
    }
    // Wait (bounded) until every device connected or failed.
    while state.connected.load(ordering: .relaxed) + state.failures.load(ordering: .relaxed) < devices && wallSeconds() < connectDeadline + 1 {
        usleep(100_000)
    }
    let connectSeconds = wallSeconds() - start
    usleep(2_000_000)
    let residentAfter = server.residentKiB()
    let cpuBefore = server.cpuSeconds()
    let pingsBefore = state.pings.load(ordering: .relaxed)
    let idleStart = wallSeconds()
    usleep(UInt32(idleSeconds * 1e6))
    let idle = wallSeconds() - idleStart
    let cpu = server.cpuSeconds() - cpuBefore
    let pings = state.pings.load(ordering: .relaxed) - pingsBefore
    state.stop.store(true, ordering: .relaxed)
    group.wait()
    return IdleRun(devices: devices, connected: state.connected.load(ordering: .relaxed), failures: state.failures.load(ordering: .relaxed),
                   firstFailure: state.firstFailure.withLock { $0 }, connectSeconds: connectSeconds,
                   residentBeforeKiB: residentBefore, residentAfterKiB: residentAfter, idleSeconds: idle,
                   idleServerCPUSeconds: cpu, pings: pings)
}
