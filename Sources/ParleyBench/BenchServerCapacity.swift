import Glibc
import ParleyCalling
import ParleyMedia
import ParleyMediaLeg
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
    /// Packets received over the hold against one per 20 ms per leg.
    let delivered: Double
    let serverCores: Double
    let benchCores: Double
}

/// Establishes call `index` between two new devices, with a tone each way.
private func establishCall(server: ServerUnderTest, media: DeviceMedia, index: Int) throws -> HeldCall {
    let caller = try BenchDevice(address: server.address, credentials: server.credentials, user: "hold-caller-\(index)", deviceID: "d")
    let callee = try BenchDevice(address: server.address, credentials: server.credentials, user: "hold-callee-\(index)", deviceID: "d")
    let configuration = try media.configuration()
    let callerLeg = try media.leg(0, configuration)
    let calleeLeg = try media.leg(1, configuration)
    do {
        let callID = CallID.random()
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

private struct LegTotals {
    var received: UInt64 = 0
    var lost: Int64 = 0

    static func of(_ calls: [HeldCall]) -> LegTotals {
        var totals = LegTotals()
        for call in calls {
            for leg in call.legs {
                guard let statistics = try? blockingAwait({ await leg.statistics }) else { continue }
                totals.received += statistics.rtp.packetsReceived
                totals.lost += max(0, statistics.rtp.inboundCumulativeLost)
            }
        }
        return totals
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

/// Steps up the number of simultaneous calls; stops after the first step over 1 % loss,
/// when the machine's two cores are used up, or after the last step.
func runCapacitySteps(server: ServerUnderTest, steps: [Int], holdSeconds: Double, progress: (CapacityStep) -> Void) -> [CapacityStep] {
    guard let media = try? DeviceMedia() else { return [] }
    defer { media.shutdown() }
    var held: [HeldCall] = []
    var results: [CapacityStep] = []
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
        let before = LegTotals.of(held)
        let serverBefore = server.cpuSeconds(), benchBefore = processCPUSeconds(getpid()) ?? .nan
        let start = wallSeconds()
        for _ in 0..<Int(holdSeconds * 4) {
            usleep(250_000)
            keepAlive(held)
        }
        let elapsed = wallSeconds() - start
        let serverCores = (server.cpuSeconds() - serverBefore) / elapsed
        let benchCores = ((processCPUSeconds(getpid()) ?? .nan) - benchBefore) / elapsed
        let after = LegTotals.of(held)
        let received = Double(after.received - before.received)
        let lost = Double(after.lost - before.lost)
        let loss = received + lost > 0 ? lost / (received + lost) : 1
        let delivered = received / (Double(2 * held.count) * 50 * elapsed)
        let step = CapacityStep(calls: held.count, setupFailures: failures, firstFailure: first, loss: loss, delivered: delivered,
                                serverCores: serverCores, benchCores: benchCores)
        results.append(step)
        progress(step)
        if loss > 0.01 || failures > 0 || serverCores + benchCores > 1.85 { break }
    }
    for call in held {
        try? hangUp(caller: call.caller, callee: call.callee, callID: call.callID)
        let legs = call.legs
        try? blockingAwait { for leg in legs { await leg.close() } }
    }
    return results
}
