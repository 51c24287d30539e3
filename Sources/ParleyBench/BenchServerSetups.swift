import Glibc
import ParleyCallCore
import ParleyCrypto
import ParleyICECore
import ParleyMediaCore
import ParleyMediaLegCore
import ParleyMediaLegIO
import ParleyNetLinux
import ParleySignaling
import Synchronization

// Call set-ups through one server (rows 1-3 of the `server` group): N caller/callee pairs,
// each on its own thread, place calls back to back for T seconds. A set-up is
// call.start -> callee's call.incoming -> call.ack -> call.answer -> caller's call.answered
// (-> both sides' call.established with media) -> call.hangup -> both call.ended.
// Signaling only: the SDP comes from MediaLegCore offers and answers that never run.
// With media: each device leg is a real MediaLeg (full ICE, DTLS-SRTP, an Opus tone).

/// A device's media leg (the module name keeps it apart from the engine's `CallLegID`).
typealias DeviceLeg = ParleyMediaLegIO.MediaLeg

/// Calls per second one pair places at most: four requests a set-up (call.start, call.ack,
/// call.answer, call.hangup), two per connection, keeps each connection under the server's
/// 20 requests/s limit (docs/protocol.md), as real devices would.
let setupsPerPairPerSecond = 8.0

struct SetupRun {
    var setups = 0
    var failures = 0
    var firstFailure: String?
    /// call.start sent -> the callee's call.incoming received, seconds.
    var startToIncoming: [Double] = []
    /// call.answer sent -> both sides' call.established received, seconds (media only).
    var answerToEstablished: [Double] = []
    /// Time the pairs spent waiting for their pacing slot (a sign the cap, not the server, bounds the rate).
    var pacingWait = 0.0
    var wallSeconds = 0.0
    var serverCPUSeconds = 0.0
    var benchCPUSeconds = 0.0
    /// The server's busiest threads over the run, in cores.
    var serverThreads = ""

    mutating func absorb(_ other: SetupRun) {
        setups += other.setups
        failures += other.failures
        firstFailure = firstFailure ?? other.firstFailure
        startToIncoming += other.startToIncoming
        answerToEstablished += other.answerToEstablished
        pacingWait += other.pacingWait
    }
}

private final class SetupTally: Sendable {
    let run = Mutex(SetupRun())
}

/// The device-side media of one benchmark: event loops for the legs (one per core).
final class DeviceMedia: Sendable {
    let loops: [EventLoop]

    init() throws {
        loops = try (0..<2).map { try EventLoop(name: "bench-devices-\($0)") }
    }

    /// A device's leg configuration: full ICE, Opus only, a certificate of its own. Also
    /// used for the offers and answers of signaling-only calls, from cores that never run.
    static func configuration() throws -> MediaLegConfiguration {
        var configuration = MediaLegConfiguration(iceMode: .full, certificate: try DTLSCertificate.generate())
        configuration.codecs = [.opus]
        return configuration
    }

    func leg(_ index: Int, _ configuration: MediaLegConfiguration) throws -> DeviceLeg {
        try DeviceLeg(configuration: configuration, bindingTo: [.ipv4Loopback(port: 0)], on: loops[index % loops.count])
    }

    func shutdown() { loops.forEach { $0.shutdown() } }
}

/// Runs `pairs` pairs placing calls for `seconds` against `server`; `media` gives the calls
/// real device legs.
func runCallSetups(server: ServerUnderTest, pairs: Int, seconds: Double, media: DeviceMedia?, tag: String) -> SetupRun {
    let tally = SetupTally()
    let address = server.address
    let credentials = server.credentials
    let cpuBefore = server.cpuSeconds()
    let threadsBefore = threadCPUSecondsByName(server.child.pid)
    let benchBefore = processCPUSeconds(getpid()) ?? .nan
    let start = wallSeconds()
    let end = start + seconds
    runOnThreads(pairs) { index in
        var run = SetupRun()
        do {
            let caller = try BenchDevice(address: address, credentials: credentials, user: "\(tag)-caller-\(index)", deviceID: "d-\(index)")
            let callee = try BenchDevice(address: address, credentials: credentials, user: "\(tag)-callee-\(index)", deviceID: "d-\(index)")
            let configuration = try DeviceMedia.configuration()
            var nextStart = wallSeconds()
            // Bounded by time and by count (the pacing cap times the duration, plus one).
            let maximum = Int(seconds * setupsPerPairPerSecond) + 1
            for _ in 0..<maximum {
                var now = wallSeconds()
                if now < nextStart {
                    run.pacingWait += nextStart - now
                    usleep(UInt32((nextStart - now) * 1e6))
                    now = wallSeconds()
                }
                guard now < end else { break }
                nextStart = now + 1 / setupsPerPairPerSecond
                do {
                    try placeCall(caller: caller, callee: callee, configuration: configuration, media: media, index: index, into: &run)
                    run.setups += 1
                } catch {
                    run.failures += 1
                    if run.firstFailure == nil { run.firstFailure = "\(error)" }
                    // A failed call leaves the pair's connections in an unknown state.
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
    run.wallSeconds = wallSeconds() - start
    run.serverCPUSeconds = server.cpuSeconds() - cpuBefore
    run.serverThreads = busiestThreads(before: threadsBefore, after: threadCPUSecondsByName(server.child.pid), seconds: run.wallSeconds)
    run.benchCPUSeconds = (processCPUSeconds(getpid()) ?? .nan) - benchBefore
    return run
}

/// A fresh call id from the system's generator, as a device makes one.
func newCallID() -> String {
    var generator = SystemRandomNumberGenerator()
    return CallID.random(using: &generator)
}

/// One whole set-up and hang-up; appends its latencies to `run`.
private func placeCall(caller: BenchDevice, callee: BenchDevice, configuration: MediaLegConfiguration, media: DeviceMedia?,
                       index: Int, into run: inout SetupRun) throws {
    let callID = newCallID()
    var callerLeg: DeviceLeg?
    var calleeLeg: DeviceLeg?
    defer {
        for leg in [callerLeg, calleeLeg].compactMap({ $0 }) { try? blockingAwait { await leg.close() } }
    }
    let offer: String
    if let media {
        let leg = try media.leg(2 * index, configuration)
        callerLeg = leg
        offer = try blockingAwait { try await leg.makeOffer() }
    } else {
        var core = MediaLegCore(configuration: configuration, localAddresses: [ICETransportAddress(ip: .ipv4(0x7F00_0001), port: 9)],
                                now: SystemClock.now(), random: SystemRandomNumberGenerator())
        offer = try core.makeOffer()
    }

    let startID = caller.requestID()
    let sent = wallSeconds()
    try caller.send(.callStart(.init(requestID: startID, callID: callID, to: .user(callee.user), sdp: offer)))
    // The callee is read first, so the latency is not held up by reading the caller.
    guard case .callIncoming(let incoming) = try callee.expect(.callIncoming, callID: callID) else { return }
    run.startToIncoming.append(wallSeconds() - sent)
    try caller.expect(.result, replyTo: startID)
    if let callerLeg {
        guard case .callMedia(let anchor) = try caller.expect(.callMedia, callID: callID) else { return }
        try blockingAwait {
            try await callerLeg.acceptAnswer(anchor.sdp)
            try await callerLeg.start(source: ToneSource(frequency: 440, amplitude: 0.3))
        }
    }
    try callee.request { .callAck(.init(requestID: $0, callID: callID)) }

    let answer: String
    if let media {
        let leg = try media.leg(2 * index + 1, configuration)
        calleeLeg = leg
        let remote = incoming.sdp
        answer = try blockingAwait {
            let sdp = try await leg.answer(offer: remote)
            try await leg.start(source: ToneSource(frequency: 1000, amplitude: 0.3))
            return sdp
        }
    } else {
        var core = MediaLegCore(configuration: configuration, localAddresses: [ICETransportAddress(ip: .ipv4(0x7F00_0001), port: 9)],
                                now: SystemClock.now(), random: SystemRandomNumberGenerator())
        answer = try core.answer(offer: incoming.sdp)
    }
    let answerID = callee.requestID()
    let answered = wallSeconds()
    try callee.send(.callAnswer(.init(requestID: answerID, callID: callID, sdp: answer)))
    try callee.expect(.result, replyTo: answerID)
    try caller.expect(.callAnswered, callID: callID)
    if media != nil {
        try caller.expect(.callEstablished, callID: callID, timeout: .seconds(15))
        try callee.expect(.callEstablished, callID: callID, timeout: .seconds(15))
        run.answerToEstablished.append(wallSeconds() - answered)
    }
    try hangUp(caller: caller, callee: callee, callID: callID)
}

/// The caller hangs up; its `result` and both `call.ended` (any order) must follow.
func hangUp(caller: BenchDevice, callee: BenchDevice, callID: String) throws {
    let id = caller.requestID()
    try caller.send(.callHangup(.init(requestID: id, callID: callID)))
    var gotResult = false, gotEnded = false
    for _ in 0..<64 where !(gotResult && gotEnded) {
        let message = try caller.next(timeout: .seconds(10))
        if message.type == .result && message.replyTo == id { gotResult = true }
        if message.type == .callEnded && message.callID == callID { gotEnded = true }
        if case .error = message { throw BenchDevice.Failure(description: "hang-up refused: \(SignalingCodec.encodeToString(message))") }
    }
    guard gotResult && gotEnded else { throw BenchDevice.Failure(description: "no result and call.ended after hang-up") }
    try callee.expect(.callEnded, callID: callID)
}
