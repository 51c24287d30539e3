import ParleyWireCore
import ParleyCallCore
import ParleySignaling

/// The call engine alone (no sockets, no media): one whole call per iteration through
/// `CallRegistry` (start, leg reports, ack from two devices, answer, legs connected,
/// hang up), with 1000 other calls ringing in the registry; and a caller's `call.start`
/// to an unknown user (checks, record, `call.ended`).
func callingBenchmarks() -> [Benchmark] {
    let app = "bench-app"
    let alice = Device(user: AppUser(applicationKey: app, userID: "alice"), deviceID: "a1")
    let bob1 = Device(user: AppUser(applicationKey: app, userID: "bob"), deviceID: "b1")
    let bob2 = Device(user: AppUser(applicationKey: app, userID: "bob"), deviceID: "b2")
    let offer = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n"
    var clock = ClockReading(instant: ContinuousClock.now, unixMilliseconds: 1_764_421_200_000)
    var registry = CallRegistry()
    for device in [alice, bob1, bob2] { _ = registry.deviceConnected(device, resumed: false, now: clock) }
    var generator = SystemRandomNumberGenerator()
    // Background load: calls from other users that keep ringing.
    for index in 0..<1000 {
        let caller = Device(user: AppUser(applicationKey: app, userID: "u\(index)"), deviceID: "d")
        _ = registry.deviceConnected(caller, resumed: false, now: clock)
        let id = CallID.random(using: &generator)
        _ = registry.handleRequest(.callStart(.init(requestID: "1", callID: id, to: .user("bob"), sdp: offer)), from: caller, now: clock)
        _ = registry.handleMedia(.callerLegReady(sdp: offer), callID: id, now: clock)
    }

    func count(_ actions: [CallAction]) -> Int { actions.count }

    let wholeCall = Benchmark(format: "calling", operation: "whole call through CallRegistry", messageBytes: 0) {
        let id = CallID.random(using: &generator)
        var sent = 0
        sent += count(registry.handleRequest(.callStart(.init(requestID: "1", callID: id, to: .user("bob"), sdp: offer)), from: alice, now: clock))
        sent += count(registry.handleMedia(.callerLegReady(sdp: offer), callID: id, now: clock))
        sent += count(registry.handleMedia(.calleeLegReady(.device(bob1), sdp: offer), callID: id, now: clock))
        sent += count(registry.handleMedia(.calleeLegReady(.device(bob2), sdp: offer), callID: id, now: clock))
        sent += count(registry.handleRequest(.callAck(.init(requestID: "2", callID: id)), from: bob1, now: clock))
        sent += count(registry.handleRequest(.callAck(.init(requestID: "2", callID: id)), from: bob2, now: clock))
        sent += count(registry.handleRequest(.callAnswer(.init(requestID: "3", callID: id, sdp: offer)), from: bob1, now: clock))
        sent += count(registry.handleMedia(.legConnected(.caller), callID: id, now: clock))
        sent += count(registry.handleMedia(.legConnected(.callee(.device(bob1))), callID: id, now: clock))
        sent += count(registry.handleRequest(.callHangup(.init(requestID: "4", callID: id)), from: alice, now: clock))
        clock = clock.advanced(by: .milliseconds(1))
        benchmarkSink &+= sent
    }
    let unknownUser = Benchmark(format: "calling", operation: "call.start to an unknown user", messageBytes: 0) {
        let id = CallID.random(using: &generator)
        benchmarkSink &+= registry.handleRequest(.callStart(.init(requestID: "1", callID: id, to: .user("nobody"), sdp: offer)), from: alice, now: clock).count
    }
    let deadline = Benchmark(format: "calling", operation: "nextDeadline over 1000 calls", messageBytes: 0) {
        benchmarkSink &+= registry.nextDeadline == nil ? 0 : 1
    }
    return [wholeCall, unknownUser, deadline]
}
