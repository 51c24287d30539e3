import Glibc
import ParleyICECore
import ParleyMediaLegCore
import ParleyNetCore
import ParleyNetLinux
import ParleySRTP
import ParleySTUN
import ParleyWireCore

// `ParleyBench relay-serve`: parleyd's relay path as its own process, so that its CPU time is
// read from /proc/<pid>/stat exactly like rtpengine's. Each route is one call as parleyd's
// media anchor holds it (MediaAnchor.swift): a `RelayBridge` with two forward-mode
// `MediaLegCore`s, each leg on a UDP socket of its own, every socket on one media loop
// (`EventLoop`: epoll, `recvmmsg` batches of 16, 8 batches a wake-up at most), each packet
// decrypted, rewritten onto the other leg's stream and re-encrypted in place in the loop's
// work buffer (`RelayBridge.receive(buffer:...)`), sent with the other leg's socket, and the
// legs' deadlines (RTCP reports) rescheduled after every wake-up, as the anchor does.
//
// The one difference from parleyd: the legs' transport. parleyd's device legs run ICE-lite
// and DTLS-SRTP, whose keys the load generator could not know; these run `PlainRTPTransport`
// with the SRTP keys given on stdin (the SDES seam), and latch onto the sender as a SIP leg
// would. Admission, the SRTP sessions and the rewrite are the same code on both transports;
// `ParleyBench relay-path` measures the two side by side in process.
//
// Control on stdin, one command a line:
//   route <source> <inbound profile> <inbound key hex> <destination> <outbound profile> <outbound key hex>
//             one call: leg 0 takes the stream from <source>, leg 1 relays it to <destination>
//             with SSRC streamSSRCBase + (the route's index), sequence numbers and timestamps
//             continuing the source's (so the receiver can check every packet)
//   go        bind, print "ports <leg 0 port of each route, in order>", start relaying
//   stop      (or end of input) print the counters as one line and exit
// Profiles by their SRTPProfile raw value (aes128CmHmacSha1_80, aeadAes128Gcm).

/// One relayed call: its bridge and its two legs' sockets and timers. Built on the main
/// thread before `go`, then used on the media loop only.
private final class RelayCall: @unchecked Sendable {
    let bridge = RelayBridge<Int>()
    /// Leg 0 faces the sender, leg 1 the receiver.
    let sockets: [UDPSocket]
    let locals: [ICETransportAddress]
    var timers: [(id: TimerID, at: ContinuousClock.Instant)?] = [nil, nil]
    /// The socket address of each leg's last destination (as `AnchoredLeg.destination`).
    private var lastDestination: [(ice: ICETransportAddress, socket: SocketAddress)?] = [nil, nil]

    init(sockets: [UDPSocket]) {
        self.sockets = sockets
        locals = sockets.map { RelayCall.iceAddress($0.localAddress) }
    }

    func destination(_ leg: Int, _ to: ICETransportAddress) -> SocketAddress? {
        if let last = lastDestination[leg], last.ice == to { return last.socket }
        guard let address = SocketAddress(hostBytes: to.ip.bytes, port: to.port) else { return nil }
        lastDestination[leg] = (to, address)
        return address
    }

    static func iceAddress(_ address: SocketAddress) -> ICETransportAddress {
        ICETransportAddress(ip: STUNIPAddress(bytes: address.hostBytes) ?? .ipv4(0), port: address.port)
    }
}

/// The relay's one media loop with its receive batch and work buffer (as the anchor's
/// media loop and `MediaLoopBuffers`), and what it does for each call on it.
private final class RelayMediaLoop: @unchecked Sendable {
    // @unchecked: the buffers and the calls' state are used on `loop`'s thread only.
    let loop: EventLoop
    let batch = UDPReceiveBatch(capacity: 16, slotSize: 2048)
    let work = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048 + 64, alignment: 16)

    init() throws(NetError) { loop = try EventLoop(name: "parley-media-1") }
    deinit { work.deallocate() }

    /// Registers both legs' sockets and starts the legs (on the loop).
    func start(_ call: RelayCall, now: ContinuousClock.Instant) throws {
        for leg in 0..<2 {
            try loop.register(call.sockets[leg], closeOnShutdown: true, onReadable: { [weak self, weak call] in
                guard let self, let call else { return }
                self.readable(call, leg)
            })
            perform(try call.bridge.start(leg, now: now), in: call)
            reschedule(call, leg)
        }
    }

    private func readable(_ call: RelayCall, _ leg: Int) {
        let socket = call.sockets[leg]
        for _ in 0..<8 {  // bounded per wake-up, as the anchor does
            guard let count = try? socket.receive(into: batch), count > 0 else { break }
            let now = ContinuousClock.now
            for index in 0..<count {
                let payload = batch.payload(at: index)
                work.copyMemory(from: payload)
                let from = RelayCall.iceAddress(batch.source(at: index))
                let receipt = call.bridge.receive(buffer: work, length: payload.count, from: from, on: leg,
                                                  local: call.locals[leg], now: now)
                if let send = receipt.send, let destination = call.destination(send.leg, send.to) {
                    _ = try? call.sockets[send.leg].send(UnsafeRawBufferPointer(rebasing: work[..<send.length]), to: destination)
                }
                perform(receipt.actions, in: call)
            }
            if count < batch.capacity { break }
        }
        reschedule(call, 0)
        reschedule(call, 1)
    }

    private func perform(_ actions: [MediaTopologyAction<Int>], in call: RelayCall) {
        for case .send(let leg, let bytes, _, let to) in actions {
            guard let destination = call.destination(leg, to) else { continue }
            _ = try? call.sockets[leg].send(bytes, to: destination)
        }
    }

    private func reschedule(_ call: RelayCall, _ leg: Int) {
        guard let next = call.bridge.nextDeadline(of: leg) else {
            if let timer = call.timers[leg] { _ = loop.cancel(timer.id); call.timers[leg] = nil }
            return
        }
        if let timer = call.timers[leg] {
            if timer.at == next { return }
            _ = loop.cancel(timer.id)
        }
        let id = loop.schedule(at: next) { [weak self, weak call] in
            guard let self, let call else { return }
            call.timers[leg] = nil
            self.perform(call.bridge.handleTimeout(of: leg, now: .now), in: call)
            self.reschedule(call, 0)
            self.reschedule(call, 1)
        }
        call.timers[leg] = (id, next)
    }
}

/// Makes one forward-mode leg of a relayed call, negotiated with plain RTP SDP against a
/// stand-in for the peer at `peer` (the sender or the receiver), started and keyed.
private func relayLeg(
    local: ICETransportAddress, peer: ICETransportAddress, keys: PlainRTPTransport.Keys, ssrc: UInt32?, now: ContinuousClock.Instant
) throws -> MediaLegCore {
    var configuration = MediaLegConfiguration(plainRTP: .init(keys: keys))
    configuration.codecs = [.opus]
    configuration.mediaMode = .forward
    configuration.ssrc = ssrc
    configuration.sequenceNumberStart = 1
    configuration.timestampStart = 0
    var peerConfiguration = MediaLegConfiguration(plainRTP: .init())
    peerConfiguration.codecs = [.opus]
    var stand = MediaLegCore(configuration: peerConfiguration, localAddresses: [peer],
                             now: ClockReading(instant: now, unixNanoseconds: 0), random: SystemRandomNumberGenerator())
    var leg = MediaLegCore(configuration: configuration, localAddresses: [local],
                           now: ClockReading(instant: now, unixNanoseconds: SystemClock.now().unixNanoseconds),
                           random: SystemRandomNumberGenerator())
    let answer = try leg.answer(offer: try stand.makeOffer())
    try stand.acceptAnswer(answer)
    return leg
}

/// Runs the relay server; returns the process exit status.
func relayServeMain() -> Int32 {
    var calls: [RelayCall] = []
    var pendingInput: [UInt8] = []
    var started = false
    var generator = BenchRandom(seed: 4711)
    guard let media = try? RelayMediaLoop() else {
        emitLine("error cannot start the media loop")
        return 1
    }
    let loop = media.loop

    func handle(_ line: Substring) -> Bool {
        let fields = line.split(separator: " ")
        switch fields.first {
        case "route"?:
            guard fields.count == 7,
                  let source = try? SocketAddress(parsing: String(fields[1])),
                  let inProfile = SRTPProfile(rawValue: String(fields[2])), let inKey = hexBytes(fields[3]),
                  let destination = try? SocketAddress(parsing: String(fields[4])),
                  let outProfile = SRTPProfile(rawValue: String(fields[5])), let outKey = hexBytes(fields[6]),
                  let a = try? UDPSocket(bindingTo: .ipv4Loopback(port: 0)),
                  let b = try? UDPSocket(bindingTo: .ipv4Loopback(port: 0)) else {
                emitLine("error bad route: \(line)")
                return false
            }
            let call = RelayCall(sockets: [a, b])
            let now = ContinuousClock.now
            do {
                let fromSender = try relayLeg(
                    local: call.locals[0], peer: RelayCall.iceAddress(source),
                    keys: .init(profile: inProfile, localKeyMaterial: generator.bytes(inProfile.keyMaterialLength), remoteKeyMaterial: inKey),
                    ssrc: nil, now: now)
                let toReceiver = try relayLeg(
                    local: call.locals[1], peer: RelayCall.iceAddress(destination),
                    keys: .init(profile: outProfile, localKeyMaterial: outKey, remoteKeyMaterial: generator.bytes(outProfile.keyMaterialLength)),
                    ssrc: streamSSRCBase + UInt32(calls.count), now: now)
                call.bridge.add(0, core: fromSender)
                call.bridge.add(1, core: toReceiver)
                try call.bridge.join(0)
                try call.bridge.join(1)
            } catch {
                emitLine("error cannot set up the call of route \(calls.count): \(error)")
                return false
            }
            calls.append(call)
        case "go"?:
            let all = calls
            let failure: String? = loop.runAndWait {
                let now = ContinuousClock.now
                for call in all {
                    do { try media.start(call, now: now) } catch { return "cannot start a call: \(error)" }
                }
                return nil
            } ?? "the media loop stopped"
            if let failure {
                emitLine("error \(failure)")
                return false
            }
            started = true
            emitLine("ports " + calls.map { String($0.sockets[0].localAddress.port) }.joined(separator: " "))
        case "stop"?:
            return false
        default:
            break
        }
        return true
    }

    /// Reads what stdin has; false at end of input, on `stop` or on a bad command.
    func readControl() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { return true }
        guard n > 0 else { return false }
        pendingInput += chunk[..<n]
        while let newline = pendingInput.firstIndex(of: 10) {
            let line = String(decoding: pendingInput[..<newline], as: UTF8.self)
            pendingInput.removeFirst(newline + 1)
            if !handle(line[...]) { return false }
        }
        return true
    }

    // Configuration phase: block on stdin until `go`; then the media loop relays while this
    // thread waits for `stop`.
    while !started {
        guard readControl() else {
            loop.shutdown()
            return 1
        }
    }
    while readControl() {}
    let all = calls
    let counters = loop.runAndWait { () -> String in
        var forwarded: UInt64 = 0, auth: UInt64 = 0, replays: UInt64 = 0, malformed: UInt64 = 0, foreign: UInt64 = 0, notSent: UInt64 = 0
        for call in all {
            if let out = call.bridge.withLeg(1, { (core: inout MediaLegCore) in core.statistics }) {
                forwarded &+= out.framesSent
                notSent &+= out.framesNotSent
            }
            if let inbound = call.bridge.withLeg(0, { (core: inout MediaLegCore) in core.statistics }) {
                auth &+= inbound.dropped[.srtpAuthentication] ?? 0
                replays &+= inbound.dropped[.srtpReplay] ?? 0
                malformed &+= (inbound.dropped[.srtpMalformed] ?? 0) &+ (inbound.dropped[.malformedRTP] ?? 0)
                foreign &+= inbound.dropped[.foreignSource] ?? 0
            }
        }
        return "counters forwarded=\(forwarded) authFailures=\(auth) replays=\(replays) malformed=\(malformed) "
            + "foreignSource=\(foreign) notSent=\(notSent)"
    } ?? "counters unavailable: the media loop stopped"
    emitLine(counters)
    loop.shutdown()
    return 0
}

/// Writes one line to stdout unbuffered (the parent waits for it on a pipe).
private func emitLine(_ text: String) {
    var bytes = Array((text + "\n").utf8)[...]
    while !bytes.isEmpty {
        let n = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { return }
        bytes = bytes.dropFirst(n)
    }
}

func hexString(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    for byte in bytes { out += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
    return String(decoding: out, as: UTF8.self)
}

func hexBytes(_ text: Substring) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }
    var out: [UInt8] = []
    for index in stride(from: 0, to: digits.count, by: 2) {
        guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
        out.append(high << 4 | low)
    }
    return out
}

/// `ParleyBench relay-serve`: runs the relay server, then exits the process with its status.
func runRelayServeAndExit() -> Never { exit(relayServeMain()) }
