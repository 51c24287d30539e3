import Glibc
import ParleyCallCore
import ParleyMediaCore
import ParleyMediaLegCore
import ParleySignaling
import Synchronization

// Concurrent established calls (row 5 of the `server` group): the number of simultaneous
// calls with media steps up; each step is held for a few seconds and the device legs'
// receive statistics (both directions) give the loss of that step. The load generator's
// legs encode and decode Opus in the bench process, on the same two cores as the server.

/// One established call, its two devices and their legs.
final class HeldCall {
    let caller: BenchDevice
    let callee: BenchDevice
    let callID: String
    let legs: [DeviceLeg]

    init(caller: BenchDevice, callee: BenchDevice, callID: String, legs: [DeviceLeg]) {
        self.caller = caller
        self.callee = callee
        self.callID = callID
        self.legs = legs
    }
}

struct CapacityStep {
    let calls: Int
    let setupFailures: Int
    let firstFailure: String?
    /// Lost / (received + lost) over the hold, summed over every leg's receive side.
    let loss: Double
    /// Packets received against one per 20 ms per leg, over each leg's own window.
    let delivered: Double
    /// Frames the device legs' pacers sent against one per 20 ms: below 100 % the load
    /// generator itself is short of CPU.
    let sent: Double
    let serverCores: Double
    /// The server's CPU before the first call, in cores.
    let serverIdleCores: Double
    let benchCores: Double
    /// Busy cores of the whole machine (/proc/stat), other processes included.
    let machineCores: Double

    /// Server CPU per call above its idle level, in milliseconds per second.
    var serverMillisecondsPerCall: Double { max(0, serverCores - serverIdleCores) / Double(max(calls, 1)) * 1e3 }

    /// Whether the step carried its full load (every frame sent) within 1 % loss.
    var passed: Bool { setupFailures == 0 && loss <= 0.01 && sent >= 0.95 }

    /// Why the step-up stops after this step, if it does.
    var stopReason: String? {
        if setupFailures > 0 { return "set-ups failed" }
        if loss > 0.01 { return "loss over 1 %" }
        if sent < 0.95 { return "the load generator cannot send in real time (its legs are short of CPU)" }
        return nil
    }
}

/// Establishes call `index` between two new devices, with a tone each way.
private func establishCall(server: ServerUnderTest, media: DeviceMedia, index: Int) throws -> HeldCall {
    let caller = try BenchDevice(address: server.address, credentials: server.credentials, user: "hold-caller-\(index)", deviceID: "d")
    let callee = try BenchDevice(address: server.address, credentials: server.credentials, user: "hold-callee-\(index)", deviceID: "d")
    let configuration = try DeviceMedia.configuration()
    let callerLeg = try media.leg(0, configuration)
    let calleeLeg = try media.leg(1, configuration)
    do {
        let callID = newCallID()
        let offer = try blockingAwait { try await callerLeg.makeOffer() }
        let startID = caller.requestID()
        try caller.send(.callStart(.init(requestID: startID, callID: callID, to: .user(callee.user), sdp: offer)))
        guard case .callIncoming(let incoming) = try callee.expect(.callIncoming, callID: callID) else { throw BenchDevice.Failure(description: "no call.incoming") }
        try caller.expect(.result, replyTo: startID)
        guard case .callMedia(let anchor) = try caller.expect(.callMedia, callID: callID) else { throw BenchDevice.Failure(description: "no call.media") }
        try blockingAwait {
            try await callerLeg.acceptAnswer(anchor.sdp)
            try await callerLeg.start(source: ToneSource(frequency: 440, amplitude: 0.3))
        }
        try callee.request { .callAck(.init(requestID: $0, callID: callID)) }
        let remote = incoming.sdp
        let answer = try blockingAwait {
            let sdp = try await calleeLeg.answer(offer: remote)
            try await calleeLeg.start(source: ToneSource(frequency: 1000, amplitude: 0.3))
            return sdp
        }
        try callee.request { .callAnswer(.init(requestID: $0, callID: callID, sdp: answer)) }
        try caller.expect(.callEstablished, callID: callID, timeout: .seconds(20))
        try callee.expect(.callEstablished, callID: callID, timeout: .seconds(20))
        return HeldCall(caller: caller, callee: callee, callID: callID, legs: [callerLeg, calleeLeg])
    } catch {
        try? blockingAwait {
            await callerLeg.close()
            await calleeLeg.close()
        }
        throw error
    }
}

/// What the set-up threads of one step hand back.
private final class CapacityCollector: Sendable {
    let state = Mutex<(calls: [HandOver<HeldCall>], failures: Int, first: String?)>(([], 0, nil))
}

/// One leg's receive counters and when they were read (reading hundreds of legs one by
/// one takes a while on loaded loops, so each leg's window is its own).
private struct LegSnapshot {
    var received: UInt64 = 0
    var lost: Int64 = 0
    var sent: UInt64 = 0
    var at = 0.0

    static func of(_ calls: [HeldCall]) -> [LegSnapshot] {
        var snapshots: [LegSnapshot] = []
        for call in calls {
            for leg in call.legs {
                let statistics = try? blockingAwait({ await leg.statistics })
                snapshots.append(LegSnapshot(received: statistics?.rtp.packetsReceived ?? 0,
                                             lost: max(0, statistics?.rtp.inboundCumulativeLost ?? 0),
                                             sent: statistics?.framesSent ?? 0, at: wallSeconds()))
            }
        }
        return snapshots
    }
}

/// The machine's busy CPU time from /proc/stat (every core, every process).
enum MachineCPU {
    struct Sample {
        let busySeconds: Double
        let at: Double
    }

    static func now() -> Sample {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var busy = 0.0
        if let text = readSmallFile("/proc/stat"), let line = text.split(separator: "\n").first, line.hasPrefix("cpu ") {
            // user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
            let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
            if fields.count >= 8 { busy = (fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7]) / ticks }
        }
        return Sample(busySeconds: busy, at: wallSeconds())
    }

    static func busyCores(since sample: Sample) -> Double {
        let current = now()
        return (current.busySeconds - sample.busySeconds) / max(current.at - sample.at, 1e-3)
    }
}

/// Pings every held device that is due, so idle signaling connections stay open.
private func keepAlive(_ calls: [HeldCall]) {
    let now = ContinuousClock.now
    for call in calls {
        _ = try? call.caller.keepAlive(now: now)
        _ = try? call.callee.keepAlive(now: now)
    }
}

/// Steps up the number of simultaneous calls; stops after the first step with set-up
/// failures, over 1 % loss or with the load generator short of CPU (`CapacityStep.stopReason`),
/// or after the last step.
func runCapacitySteps(server: ServerUnderTest, steps: [Int], holdSeconds: Double, progress: (CapacityStep) -> Void) -> [CapacityStep] {
    guard let media = try? DeviceMedia() else { return [] }
    defer { media.shutdown() }
    var held: [HeldCall] = []
    var results: [CapacityStep] = []
    // The server's CPU with no call (edge and engine timers), taken off each step's figure per call.
    let idleBefore = server.cpuSeconds(), idleStart = wallSeconds()
    usleep(2_000_000)
    let idleCores = (server.cpuSeconds() - idleBefore) / (wallSeconds() - idleStart)
    var nextIndex = 0
    for target in steps {
        // New calls are set up by up to 8 threads, each handing its calls back.
        let missing = max(0, target - held.count)
        let threads = min(8, max(1, missing))
        let collected = CapacityCollector()
        let firstIndex = nextIndex
        nextIndex += missing
        let serverBox = HandOver(server)
        runOnThreads(threads) { thread in
            for offset in stride(from: thread, to: missing, by: threads) {
                do {
                    let call = try establishCall(server: serverBox.value, media: media, index: firstIndex + offset)
                    collected.state.withLock { $0.calls.append(HandOver(call)) }
                } catch {
                    collected.state.withLock {
                        $0.failures += 1
                        if $0.first == nil { $0.first = "\(error)" }
                    }
                }
            }
        }
        let (calls, failures, first) = collected.state.withLock { ($0.calls, $0.failures, $0.first) }
        held += calls.map(\.value)
        // Let the new legs' jitter buffers settle before the measured hold.
        keepAlive(held)
        usleep(1_000_000)
        let before = LegSnapshot.of(held)
        let serverBefore = server.cpuSeconds(), benchBefore = processCPUSeconds(getpid()) ?? .nan
        let machineBefore = MachineCPU.now()
        let machine = MachineCPU.self
        let start = wallSeconds()
        for _ in 0..<Int(holdSeconds * 4) {
            usleep(250_000)
            keepAlive(held)
        }
        let elapsed = wallSeconds() - start
        let serverCores = (server.cpuSeconds() - serverBefore) / elapsed
        let benchCores = ((processCPUSeconds(getpid()) ?? .nan) - benchBefore) / elapsed
        let after = LegSnapshot.of(held)
        var received = 0.0, lost = 0.0, sent = 0.0, expected = 0.0
        for (first, last) in zip(before, after) {
            sent += Double(last.sent) - Double(first.sent)
            received += Double(last.received) - Double(first.received)
            lost += Double(last.lost) - Double(first.lost)
            expected += 50 * (last.at - first.at)
        }
        let loss = received + lost > 0 ? lost / (received + lost) : 1
        let delivered = received / max(expected, 1)
        let machineBusy = machine.busyCores(since: machineBefore)
        let step = CapacityStep(calls: held.count, setupFailures: failures, firstFailure: first, loss: loss, delivered: delivered,
                                sent: sent / max(expected, 1), serverCores: serverCores, serverIdleCores: idleCores, benchCores: benchCores, machineCores: machineBusy)
        results.append(step)
        progress(step)
        if step.stopReason != nil { break }
    }
    for call in held {
        try? hangUp(caller: call.caller, callee: call.callee, callID: call.callID)
        let legs = call.legs
        try? blockingAwait { for leg in legs { await leg.close() } }
    }
    return results
}
