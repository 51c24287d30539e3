import ParleyICECore
import ParleySTUN
import ParleyTestSupport
import Testing

/// What the in-memory network needs from an agent.
protocol PumpedAgent {
    mutating func receive(_ bytes: [UInt8], from source: ICETransportAddress, on local: ICETransportAddress, now: ICEInstant) -> [ICEAction]
    mutating func handleTimeout(now: ICEInstant) -> [ICEAction]
    var nextDeadline: ICEInstant? { get }
    var state: ICEConnectionState { get }
    var selectedPair: ICECandidatePair? { get }
}

extension ICELiteAgent: PumpedAgent {}
extension ICEFullAgent: PumpedAgent {}

func address(_ text: String, _ port: UInt16) -> ICETransportAddress {
    guard let address = ICETransportAddress(ip: text, port: port) else { fatalError("bad test address \(text)") }
    return address
}

struct Datagram: Hashable {
    var bytes: [UInt8]
    var from: ICETransportAddress
    var to: ICETransportAddress
}

enum Side: String { case device, server }

struct LoggedAction {
    var side: Side
    var at: Duration
    var action: ICEAction
}

/// Two agents joined by a lossless, instant in-memory network, an optional NAT in front of
/// the device, a loss rule, and a manual clock.
struct Pump<Device: PumpedAgent, Server: PumpedAgent> {
    var device: Device
    var server: Server
    var deviceAddresses: Set<ICETransportAddress>
    var serverAddresses: Set<ICETransportAddress>
    /// Device private address -> public address the server sees.
    var nat: [ICETransportAddress: ICETransportAddress] = [:]
    /// Return true to lose a datagram; `index` counts datagrams sent by that side.
    var lose: (Side, Datagram, Int) -> Bool = { _, _, _ in false }
    let start: ICEInstant = .now
    var now: ICEInstant
    var queue: [(Side, Datagram)] = []
    var log: [LoggedAction] = []
    var sentCount: [Side: Int] = [:]

    init(device: Device, server: Server, deviceAddresses: [ICETransportAddress], serverAddresses: [ICETransportAddress]) {
        self.device = device
        self.server = server
        self.deviceAddresses = Set(deviceAddresses)
        self.serverAddresses = Set(serverAddresses)
        self.now = start
    }

    var elapsed: Duration { now - start }

    mutating func record(_ actions: [ICEAction], from side: Side) {
        for action in actions {
            log.append(LoggedAction(side: side, at: elapsed, action: action))
            if case .send(let bytes, let from, let to) = action {
                let datagram = Datagram(bytes: bytes, from: from, to: to)
                let index = sentCount[side, default: 0]
                sentCount[side] = index + 1
                if !lose(side, datagram, index) { queue.append((side, datagram)) }
            }
        }
    }

    private mutating func deliver(_ side: Side, _ datagram: Datagram) {
        switch side {
        case .device:
            let source = nat[datagram.from] ?? datagram.from
            guard serverAddresses.contains(datagram.to) else { return }
            record(server.receive(datagram.bytes, from: source, on: datagram.to, now: now), from: .server)
        case .server:
            let destination = nat.first(where: { $0.value == datagram.to })?.key ?? datagram.to
            guard deviceAddresses.contains(destination) else { return }
            record(device.receive(datagram.bytes, from: datagram.from, on: destination, now: now), from: .device)
        }
    }

    /// Delivers datagrams and fires timers until `done` holds or `limit` of simulated time
    /// passes; bounded in steps too.
    mutating func run(for limit: Duration, until done: (Self) -> Bool = { _ in false }) {
        let end = now + limit
        for _ in 0..<200_000 {
            if done(self) { return }
            if !queue.isEmpty {
                let (side, datagram) = queue.removeFirst()
                deliver(side, datagram)
                continue
            }
            guard let next = [device.nextDeadline, server.nextDeadline].compactMap({ $0 }).min(), next <= end else {
                now = end
                return
            }
            if next > now { now = next }
            record(device.handleTimeout(now: now), from: .device)
            record(server.handleTimeout(now: now), from: .server)
        }
        Issue.record("pump did not settle within the step bound")
    }

    var bothConnected: Bool { device.state == .connected && server.state == .connected }

    func actions(of side: Side) -> [ICEAction] { log.filter { $0.side == side }.map(\.action) }

    func sent(by side: Side) -> [(at: Duration, message: STUNMessage)] {
        log.compactMap { entry in
            guard entry.side == side, case .send(let bytes, _, _) = entry.action, let message = try? STUNMessage(decoding: bytes) else { return nil }
            return (entry.at, message)
        }
    }

    func firstTime(_ side: Side, reached state: ICEConnectionState) -> Duration? {
        log.first { $0.side == side && $0.action == .stateChanged(state) }?.at
    }
}

enum Fixture {
    static let deviceCredentials = ICECredentials(ufrag: "devU", password: "device-password-0123456")
    static let serverCredentials = ICECredentials(ufrag: "srvU", password: "server-password-0123456")
    static let serverV4 = address("203.0.113.5", 3478)
    static let serverV6 = address("2001:db8::5", 3478)

    static func serverCandidate(_ address: ICETransportAddress, index: Int = 0) -> ICERemoteCandidate {
        let preference = ICEPriority.localPreference(for: address, index: index)
        return ICERemoteCandidate(
            address: address, priority: ICEPriority.candidate(type: .host, localPreference: preference), type: .host, foundation: "1")
    }

    static func lite(remote: ICECredentials? = deviceCredentials, configuration: ICELiteAgent.Configuration = .init()) -> ICELiteAgent {
        ICELiteAgent(localCredentials: serverCredentials, remoteCredentials: remote, configuration: configuration)
    }

    static func device(
        hosts: [ICETransportAddress], servers: [ICETransportAddress], serverCredentials: ICECredentials = serverCredentials,
        seed: UInt64 = 1, configuration: ICEFullAgent.Configuration = .init()
    ) -> ICEFullAgent {
        ICEFullAgent(
            role: .controlling, tieBreaker: 0x1111_2222_3333_4444, localCredentials: deviceCredentials,
            remoteCredentials: serverCredentials, hostAddresses: hosts,
            remoteCandidates: servers.enumerated().map { serverCandidate($1, index: $0) },
            random: SeededGenerator(seed: seed), configuration: configuration)
    }

    /// A Binding request as a controlling agent sends it, with knobs to break it.
    static func check(
        username: String? = "srvU:devU", password: String = "server-password-0123456", useCandidate: Bool = false,
        controlled: Bool = false, extra: [STUNAttributeValue] = [], integrity: Bool = true, fingerprint: Bool = true,
        id: UInt8 = 7
    ) -> [UInt8] {
        var message = STUNMessage(class: .request, method: .binding, transactionID: STUNTransactionID(bytes: [UInt8](repeating: id, count: 12))!)
        if let username { try! message.append(.username(username)) }
        try! message.append(.priority(ICEPriority.candidate(type: .peerReflexive, localPreference: 32767)))
        try! message.append(controlled ? .iceControlled(tieBreaker: 5) : .iceControlling(tieBreaker: 5))
        if useCandidate { try! message.append(.useCandidate) }
        for value in extra { try! message.append(value) }
        let key = STUNIntegrityKey.shortTerm(password: password)
        return try! message.encoded(addingIntegrity: integrity ? [.sha1(key: key)] : [], fingerprint: fingerprint)
    }
}
