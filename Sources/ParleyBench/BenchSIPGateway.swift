import Glibc
import ParleyCallCore
import ParleyMediaCore
import ParleyMediaLegCore
import ParleySignaling
import Synchronization

// Concurrent app-to-SIP calls through parleyd's gateway (the `gateway` row of the `sip`
// group, docs/bench-sip.md): each call is one app device (a raw protocol client and a real
// MediaLeg: ICE, DTLS-SRTP, an Opus tone) calling a SIP address that parleyd routes to a
// SIPp uas echoing RTP, so parleyd decodes, resamples and encodes both ways every 20 ms for
// every call. The number of calls steps up; each step is held a few seconds.

/// One call held through the gateway.
final class GatewayCall {
    let caller: BenchDevice
    let callID: String
    let leg: DeviceLeg

    init(caller: BenchDevice, callID: String, leg: DeviceLeg) {
        self.caller = caller
        self.callID = callID
        self.leg = leg
    }
}

/// The far side of the bench's calls: a SIP address routed to SIPp, or a phone number
/// through the trunk (SIPp too), which also passes the dialling policy's caps.
enum GatewayDestination: String {
    case sip, phone

    /// What the app dials.
    var label: String {
        switch self {
        case .sip: "bob@\(GatewayDestination.domain)"
        case .phone: "+4615550101"
        }
    }

    var address: SignalingMessage.Address {
        switch self {
        case .sip: .sip(label)
        case .phone: .phone(label)
        }
    }

    /// The SIP domain parleyd routes to the uas (`--sip-route`).
    static let domain = "pbx.test"
}

/// Places one call from a new device (user `user`) on leg `legIndex` and waits until it is
/// established; the device's leg sends a 440 Hz tone. Returns the call and the seconds from
/// `call.start` to `call.answered` and to `call.established`.
func establishGatewayCall(caller: BenchDevice, media: DeviceMedia, legIndex: Int,
                          destination: GatewayDestination) throws -> (call: GatewayCall, answered: Double, established: Double) {
    let leg = try media.leg(legIndex, try DeviceMedia.configuration())
    do {
        let callID = newCallID()
        let offer = try blockingAwait { try await leg.makeOffer() }
        let startID = caller.requestID()
        let started = wallSeconds()
        try caller.send(.callStart(.init(requestID: startID, callID: callID, to: destination.address, sdp: offer)))
        try caller.expect(.result, replyTo: startID)
        guard case .callMedia(let anchor) = try caller.expect(.callMedia, callID: callID) else {
            throw BenchDevice.Failure(description: "no call.media")
        }
        try blockingAwait {
            try await leg.acceptAnswer(anchor.sdp)
            try await leg.start(source: ToneSource(frequency: 440, amplitude: 0.3))
        }
        try caller.expect(.callAnswered, callID: callID, timeout: .seconds(20))
        let answered = wallSeconds() - started
        try caller.expect(.callEstablished, callID: callID, timeout: .seconds(20))
        return (GatewayCall(caller: caller, callID: callID, leg: leg), answered, wallSeconds() - started)
    } catch {
        try? blockingAwait { await leg.close() }
        throw error
    }
}

/// The caller hangs up a call to a SIP party; its `result` and `call.ended` must follow.
func hangUpGatewayCall(_ call: GatewayCall) throws {
    let id = call.caller.requestID()
    try call.caller.send(.callHangup(.init(requestID: id, callID: call.callID)))
    var gotResult = false, gotEnded = false
    for _ in 0..<64 where !(gotResult && gotEnded) {
        let message = try call.caller.next(timeout: .seconds(10))
        if message.type == .result && message.replyTo == id { gotResult = true }
        if message.type == .callEnded && message.callID == call.callID { gotEnded = true }
        if case .error = message { throw BenchDevice.Failure(description: "hang-up refused: \(SignalingCodec.encodeToString(message))") }
    }
    guard gotResult && gotEnded else { throw BenchDevice.Failure(description: "no result and call.ended after hang-up") }
}

/// One step of the gateway row.
struct GatewayStep {
    let calls: Int
    let setupFailures: Int
    let firstFailure: String?
    /// Lost / (received + lost) on the app legs' receive side over the hold.
    let loss: Double
    /// Packets the app legs received against one per 20 ms per call: the tone went out as
    /// Opus, through the gateway to PCMU, echoed by SIPp, through the gateway to Opus, back.
    let delivered: Double
    /// Frames the app legs sent against one per 20 ms: under 95 % the load generator is
    /// short of CPU.
    let sent: Double
    /// Frames the app legs played from concealment (no packet in time) over all frames
    /// played. Not a stop reason: a packet late from the gateway and an app pacer running
    /// late on a saturated machine (several playouts at once drain its jitter buffer) both
    /// show here, and the bench cannot tell them apart.
    let concealed: Double
    /// The app legs' RFC 3550 interarrival jitter at the end of the hold, mean over calls:
    /// how evenly the gateway's 20 ms clock sends (parleyd does not export its lateness).
    let jitterMilliseconds: Double
    /// parleyd's `parley_media_packets_received_total` over the hold per call-second (both
    /// legs: about 100 when the app sends 50 and SIPp echoes 50).
    let serverPacketsPerCallSecond: Double?
    /// parleyd's `parley_media_packets_dropped_total` over the hold.
    let serverPacketsDropped: Double?
    let serverCores: Double
    let serverIdleCores: Double
    let benchCores: Double
    let sippCores: Double
    let machineCores: Double

    /// parleyd's CPU above its idle level per call, in milliseconds per call-second.
    var serverMillisecondsPerCallSecond: Double { max(0, serverCores - serverIdleCores) / Double(max(calls, 1)) * 1e3 }

    var passed: Bool { stopReason == nil }

    /// Why the step-up stops after this step, if it does.
    var stopReason: String? {
        if setupFailures > 0 { return "set-ups failed" }
        if sent < 0.95 { return "the load generator cannot send in real time (its legs are short of CPU)" }
        if loss > 0.01 { return "loss over 1 %" }
        if delivered < 0.95 { return "under 95 % of the packets came back through the gateway" }
        return nil
    }
}

/// The app legs' counters at one moment; each leg's window is its own (reading hundreds of
/// legs one by one takes a while on loaded loops).
private struct GatewayLegSnapshot {
    var received: UInt64 = 0
    var lost: Int64 = 0
    var sent: UInt64 = 0
    var played: UInt64 = 0
    var concealed: UInt64 = 0
    var jitter = 0.0
    var at = 0.0

    static func of(_ calls: [GatewayCall]) -> [GatewayLegSnapshot] {
        calls.map { call in
            let leg = call.leg
            let statistics = try? blockingAwait({ await leg.statistics })
            return GatewayLegSnapshot(
                received: statistics?.rtp.packetsReceived ?? 0, lost: max(0, statistics?.rtp.inboundCumulativeLost ?? 0),
                sent: statistics?.framesSent ?? 0, played: statistics?.framesPlayedFromPackets ?? 0,
                concealed: statistics?.framesConcealed ?? 0, jitter: statistics?.rtp.inboundJitterMilliseconds ?? 0, at: wallSeconds())
        }
    }
}

/// What the set-up threads of one step hand back.
private final class GatewayCollector: Sendable {
    let state = Mutex<(calls: [HandOver<GatewayCall>], failures: Int, first: String?)>(([], 0, nil))
}

/// Steps up the number of simultaneous gateway calls; stops after the first step that does
/// not pass (`GatewayStep.stopReason`) or after the last.
func runGatewaySteps(server: ServerUnderTest, sipp: SIPpProcess, steps: [Int], holdSeconds: Double,
                     destination: GatewayDestination, progress: (GatewayStep) -> Void) -> [GatewayStep] {
    guard let media = try? DeviceMedia() else { return [] }
    defer { media.shutdown() }
    var held: [GatewayCall] = []
    var results: [GatewayStep] = []
    // The server's CPU with SIP on and no call, taken off each step's figure per call.
    let idleBefore = server.cpuSeconds(), idleStart = wallSeconds()
    usleep(2_000_000)
    let idleCores = (server.cpuSeconds() - idleBefore) / (wallSeconds() - idleStart)
    var nextIndex = 0
    for target in steps {
        let missing = max(0, target - held.count)
        let threads = min(8, max(1, missing))
        let collected = GatewayCollector()
        let firstIndex = nextIndex
        nextIndex += missing
        let serverBox = HandOver(server)
        runOnThreads(threads) { thread in
            for offset in stride(from: thread, to: missing, by: threads) {
                let index = firstIndex + offset
                do {
                    let caller = try BenchDevice(address: serverBox.value.address, credentials: serverBox.value.credentials,
                                                 user: "gateway-\(index)", deviceID: "d")
                    let call = try establishGatewayCall(caller: caller, media: media, legIndex: index,
                                                        destination: destination).call
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
        keepGatewayCallsAlive(held)
        usleep(1_000_000)
        let before = GatewayLegSnapshot.of(held)
        let metricsBefore = MetricsSamples.scrape(server.address)
        let serverBefore = server.cpuSeconds(), benchBefore = processCPUSeconds(getpid()) ?? .nan, sippBefore = sipp.cpuSeconds()
        let machineBefore = MachineCPU.now()
        let start = wallSeconds()
        for _ in 0..<Int(holdSeconds * 4) {
            usleep(250_000)
            keepGatewayCallsAlive(held)
        }
        let elapsed = wallSeconds() - start
        let serverCores = (server.cpuSeconds() - serverBefore) / elapsed
        let benchCores = ((processCPUSeconds(getpid()) ?? .nan) - benchBefore) / elapsed
        let sippCores = (sipp.cpuSeconds() - sippBefore) / elapsed
        let machineCores = MachineCPU.busyCores(since: machineBefore)
        let metricsAfter = MetricsSamples.scrape(server.address)
        let metricsElapsed = wallSeconds() - start
        let after = GatewayLegSnapshot.of(held)
        var received = 0.0, lost = 0.0, sent = 0.0, expected = 0.0, played = 0.0, concealed = 0.0, jitter = 0.0
        for (first, last) in zip(before, after) {
            received += Double(last.received) - Double(first.received)
            lost += Double(last.lost) - Double(first.lost)
            sent += Double(last.sent) - Double(first.sent)
            played += Double(last.played) - Double(first.played)
            concealed += Double(last.concealed) - Double(first.concealed)
            expected += 50 * (last.at - first.at)
            jitter += last.jitter
        }
        var serverPackets: Double?, serverDropped: Double?
        if let metricsBefore, let metricsAfter, !held.isEmpty {
            serverPackets = (metricsAfter.total("parley_media_packets_received_total") - metricsBefore.total("parley_media_packets_received_total"))
                / Double(held.count) / metricsElapsed
            serverDropped = metricsAfter.total("parley_media_packets_dropped_total") - metricsBefore.total("parley_media_packets_dropped_total")
        }
        let step = GatewayStep(
            calls: held.count, setupFailures: failures, firstFailure: first,
            loss: received + lost > 0 ? lost / (received + lost) : 1, delivered: received / max(expected, 1), sent: sent / max(expected, 1),
            concealed: played + concealed > 0 ? concealed / (played + concealed) : 0, jitterMilliseconds: jitter / Double(max(after.count, 1)),
            serverPacketsPerCallSecond: serverPackets, serverPacketsDropped: serverDropped, serverCores: serverCores, serverIdleCores: idleCores,
            benchCores: benchCores, sippCores: sippCores, machineCores: machineCores)
        results.append(step)
        progress(step)
        if step.stopReason != nil { break }
    }
    for call in held {
        try? hangUpGatewayCall(call)
        let leg = call.leg
        try? blockingAwait { await leg.close() }
    }
    return results
}

/// Pings every held device that is due, so idle signaling connections stay open.
private func keepGatewayCallsAlive(_ calls: [GatewayCall]) {
    let now = ContinuousClock.now
    for call in calls { _ = try? call.caller.keepAlive(now: now) }
}
