import ParleyICECore
import ParleySTUN

/// Feeds the input to an ICE lite agent (and to a full agent that has a check in flight,
/// so responses reach the response path). Neither may trap; whatever the lite agent sends
/// back must be a well-formed STUN message with a valid FINGERPRINT.
func fuzzICE(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    let device = STUNTransportAddress(ip: .ipv4(0xC000_0221), port: 50000)
    let server = STUNTransportAddress(ip: .ipv4(0xCB00_7105), port: 3478)
    let serverCredentials = ICECredentials(ufrag: "srvU", password: "server-password-0123456")
    let deviceCredentials = ICECredentials(ufrag: "devU", password: "device-password-0123456")
    let now = ContinuousClock.now

    var lite = ICELiteAgent(localCredentials: serverCredentials, remoteCredentials: deviceCredentials)
    for action in lite.receive(bytes, from: device, on: server, now: now) {
        guard case .send(let answer, _, _) = action else { continue }
        guard let message = try? STUNMessage(decoding: answer), message.verifyFingerprint() == .valid else {
            fatalError("the lite agent sent a malformed answer")
        }
    }
    _ = lite.handleTimeout(now: now + .seconds(31))

    var full = ICEFullAgent(
        role: .controlling, tieBreaker: 1, localCredentials: deviceCredentials, remoteCredentials: serverCredentials,
        hostAddresses: [device],
        remoteCandidates: [ICERemoteCandidate(address: server, priority: 2_130_706_431, type: .host, foundation: "1")],
        random: FuzzGenerator())
    _ = full.start(now: now)
    _ = full.receive(bytes, from: server, on: device, now: now)
    _ = full.handleTimeout(now: now + .seconds(1))
}

/// A fixed generator: the fuzzer needs repeatable runs, not randomness.
private struct FuzzGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64 = 0x1CE
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state
    }
}
