import ParleyICECore
import ParleySTUN

/// The server's per-check cost: an ICE lite agent handling a browser-style connectivity
/// check (USERNAME, PRIORITY, ICE-CONTROLLING, USE-CANDIDATE, MESSAGE-INTEGRITY,
/// FINGERPRINT): parse, verify FINGERPRINT and MESSAGE-INTEGRITY, build and sign the success
/// response with XOR-MAPPED-ADDRESS. Also the cost of dropping a check with a bad FINGERPRINT.
func iceBenchmarks() -> [Benchmark] {
    let local = ICECredentials(ufrag: "srvU", password: "server-password-0123456")
    let remote = ICECredentials(ufrag: "devU", password: "device-password-0123456")
    let device = STUNTransportAddress(ip: .ipv4(0xC633_6407), port: 62000)
    let server = STUNTransportAddress(ip: .ipv4(0xCB00_7105), port: 3478)
    // Constants within range: building cannot fail.
    func check(_ index: Int) -> [UInt8] {
        let id = (0..<12).map { UInt8(truncatingIfNeeded: index >> (8 * ($0 % 4))) }
        var check = STUNMessage(class: .request, method: .binding, transactionID: STUNTransactionID(bytes: id)!)
        try! check.append(.username("srvU:devU"))
        try! check.append(.priority(0x6E7F_FFFF))
        try! check.append(.iceControlling(tieBreaker: 0x0123_4567_89AB_CDEF))
        try! check.append(.useCandidate)
        return try! check.encoded(addingIntegrity: [.sha1(key: .shortTerm(password: local.password))], fingerprint: true)
    }
    // Twice as many transaction IDs as the agent remembers, sent in turn: each is forgotten
    // before it comes round again, so every check is a new one (remembered, one evicted).
    let configuration = ICELiteAgent.Configuration()
    let checks = (0..<(2 * configuration.rememberedTransactions)).map(check)
    var badFingerprint = checks[0]
    badFingerprint[badFingerprint.count - 1] ^= 0xFF

    var agent = ICELiteAgent(localCredentials: local, remoteCredentials: remote, configuration: configuration)
    let start = ContinuousClock.now
    var tick = 0
    return [
        Benchmark(format: "ice", operation: "lite: answer check (parse+verify+sign)", messageBytes: checks[0].count) {
            tick &+= 1
            let actions = agent.receive(checks[tick % checks.count], from: device, on: server, now: start + .nanoseconds(tick))
            if case .send(let bytes, _, _)? = actions.first { benchmarkSink &+= bytes.count }
        },
        Benchmark(format: "ice", operation: "lite: drop bad FINGERPRINT", messageBytes: badFingerprint.count) {
            benchmarkSink &+= agent.receive(badFingerprint, from: device, on: server, now: start).count
        },
    ]
}
