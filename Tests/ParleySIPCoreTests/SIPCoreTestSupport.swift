import Testing
import ParleySIP
import ParleySIPCore
import ParleyTestSupport

/// Virtual time: instants as milliseconds after one reading of the clock.
enum VirtualTime {
    static let t0 = ContinuousClock.now

    static func at(_ milliseconds: Int) -> ContinuousClock.Instant { t0 + .milliseconds(milliseconds) }

    static func ms(_ instant: ContinuousClock.Instant?) -> Int? {
        guard let instant else { return nil }
        return Int((instant - t0).components.seconds * 1000 + (instant - t0).components.attoseconds / 1_000_000_000_000_000)
    }
}

/// Addresses of the tests (RFC 5737 documentation ranges).
enum Hops {
    static let local = SIPHost.ipv4("192.0.2.1")
    static let peerHost = SIPHost.ipv4("192.0.2.10")
    static let peer = SIPHop(transport: .udp, host: peerHost, port: 5060)
    static let peerTCP = SIPHop(transport: .tcp, host: peerHost, port: 5060)
    /// A NATed peer: its Via says 10.0.0.5:5060, its packets come from here.
    static let natted = SIPHop(transport: .udp, host: .ipv4("198.51.100.7"), port: 40_123)
}

/// Builds test messages.
enum Messages {
    static func uri(_ text: String) -> SIPURI {
        try! SIPURI(parsing: text)
    }

    static func address(_ text: String, tag: String? = nil) -> SIPNameAddress {
        var address = try! SIPNameAddress(parsing: text)
        if let tag { address.setParameter(try! SIPParameter(name: "tag", value: tag)) }
        return address
    }

    /// A request as a peer (or we) would send it, with one Via.
    static func request(
        _ method: SIPMethod, branch: String = "z9hG4bKb1", viaHost: SIPHost = Hops.peerHost, viaPort: UInt16? = 5060,
        transport: String = "UDP", rport: Bool = false, callID: String = "c1@192.0.2.10", cseq: UInt32 = 1,
        fromTag: String? = "f1", toTag: String? = nil, maxForwards: Int = 70, uri requestURI: String = "sip:bob@192.0.2.1",
        body: [UInt8] = [], contentType: SIPContentType? = nil
    ) -> SIPMessage {
        var parameters: [SIPParameter] = []
        if rport { parameters.append(try! SIPParameter(name: "rport")) }
        let via = try! SIPVia(transport: transport, host: viaHost, port: viaPort, branch: branch, parameters: parameters)
        return try! SIPMessage.request(
            method: method, uri: uri(requestURI), via: via,
            from: address("<sip:alice@example.test>", tag: fromTag), to: address("<sip:bob@example.test>", tag: toTag),
            callID: callID, cseq: cseq, maxForwards: maxForwards, contact: address("<sip:alice@192.0.2.10>"),
            contentType: contentType, body: body)
    }

    /// A response to `request`.
    static func response(_ code: Int, to request: SIPMessage, toTag: String? = "t1") -> SIPMessage {
        try! request.makeResponse(statusCode: code, toTag: code == 100 ? nil : toTag)
    }
}

extension Array where Element == SIPTransactionOutput {
    /// The messages sent, in order.
    var sent: [SIPMessage] {
        compactMap { if case .send(let message, _) = $0 { message } else { nil } }
    }

    /// The hops messages went to, in order.
    var sentHops: [SIPHop] {
        compactMap { if case .send(_, let hop) = $0 { hop } else { nil } }
    }

    /// Everything but sends: what the TU hears.
    var toTU: [SIPTransactionOutput] {
        filter { if case .send = $0 { false } else { true } }
    }

    /// The status codes of responses sent.
    var sentStatusCodes: [Int] { sent.compactMap(\.statusCode) }
}

/// Drives a transaction layer through virtual time, collecting every output.
struct LayerClock {
    var layer: SIPTransactionLayer
    /// Milliseconds after `VirtualTime.t0`.
    var now = 0

    init(_ configuration: SIPTransactionLayer.Configuration = .init()) {
        layer = SIPTransactionLayer(configuration: configuration, random: SeededGenerator(seed: 7))
    }

    /// Moves time to `milliseconds`, firing every deadline on the way at its instant; the
    /// outputs with the time each came at.
    mutating func run(until milliseconds: Int) -> [(at: Int, output: SIPTransactionOutput)] {
        var out: [(Int, SIPTransactionOutput)] = []
        while let deadline = VirtualTime.ms(layer.nextDeadline), deadline <= milliseconds {
            now = max(now, deadline)
            for output in layer.handleTimeout(now: VirtualTime.at(now)) { out.append((now, output)) }
        }
        now = milliseconds
        return out
    }

    mutating func receive(_ message: SIPMessage, from hop: SIPHop = Hops.peer) -> [SIPTransactionOutput] {
        layer.receive(message, from: hop, now: VirtualTime.at(now))
    }

    mutating func send(_ request: SIPMessage, to hop: SIPHop = Hops.peer) throws -> (id: SIPTransactionID, outputs: [SIPTransactionOutput]) {
        try layer.sendRequest(request, to: hop, now: VirtualTime.at(now))
    }

    mutating func respond(_ response: SIPMessage, on id: SIPTransactionID) throws -> [SIPTransactionOutput] {
        try layer.respond(response, on: id, now: VirtualTime.at(now))
    }
}

/// The id of the server transaction a `.request` output names.
func serverTransaction(in outputs: [SIPTransactionOutput], sourceLocation: SourceLocation = #_sourceLocation) -> SIPTransactionID? {
    for output in outputs { if case .request(_, _, let id) = output { return id } }
    Issue.record("no request passed up in \(outputs)", sourceLocation: sourceLocation)
    return nil
}
