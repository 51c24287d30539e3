import ParleyWireCore
import ParleyCrypto
import ParleyICECore
import ParleyMediaLegCore
import ParleyRTP
import ParleySRTP

// `ParleyBench relay`, first table: the per-packet path parleyd runs, in process, without
// sockets: two devices' legs connected in memory (ICE, DTLS-SRTP) to two forward-mode server
// legs in one `RelayBridge`; packets of device A's stream (172 bytes before the tag, as in
// the rtpengine comparison) go through `RelayBridge.receive(buffer:...)` as parleyd's media
// loops hand them over: decrypt in place with leg A's keys, rewrite onto leg B's stream,
// encrypt in place with leg B's keys, with the legs' RTCP statistics. The copying path
// (`receive(_:)` then `relay(_:)`, what parleyd ran before the in-place path) is measured on
// the same packets for comparison. A third row runs the same in-place path over legs whose
// transport is plain RTP with SRTP keys given up front (what `relay-serve`, the rtpengine
// comparison's child, runs), to show that the transport does not change the per-packet cost.
// CPU time of this thread; no system calls.

/// A bridge between two connected forward-mode legs, and device A to feed it.
private final class BridgeRig {
    final class Leg {
        var core: MediaLegCore
        let address: ICETransportAddress
        init(core: consuming MediaLegCore, address: ICETransportAddress) {
            self.core = core
            self.address = address
        }
    }

    let bridge = RelayBridge<Int>()
    let devices: [Leg]
    let serverAddresses: [ICETransportAddress]
    var now = ContinuousClock.now
    private var sequence: UInt16 = 0

    init?() {
        func address(_ port: UInt16) -> ICETransportAddress { ICETransportAddress(ip: .ipv4(0x7F00_0001), port: port) }
        var devices: [Leg] = []
        var serverAddresses: [ICETransportAddress] = []
        for index in 0..<2 {
            guard let deviceCertificate = try? DTLSCertificate.generate(), let serverCertificate = try? DTLSCertificate.generate() else { return nil }
            var server = MediaLegConfiguration(iceMode: .lite, certificate: serverCertificate)
            server.mediaMode = .forward
            let device = MediaLegConfiguration(iceMode: .full, certificate: deviceCertificate)
            var deviceCore = MediaLegCore(configuration: device, localAddresses: [address(UInt16(1000 + index))], now: ClockReading(instant: now, unixNanoseconds: 1_800_000_000_000_000_000),
                                          random: SystemRandomNumberGenerator())
            var serverCore = MediaLegCore(configuration: server, localAddresses: [address(UInt16(2000 + index))], now: ClockReading(instant: now, unixNanoseconds: 1_800_000_000_000_000_000),
                                          random: SystemRandomNumberGenerator())
            guard let offer = try? deviceCore.makeOffer(), let answer = try? serverCore.answer(offer: offer),
                  (try? deviceCore.acceptAnswer(answer)) != nil else { return nil }
            bridge.add(index, core: serverCore)
            devices.append(Leg(core: deviceCore, address: address(UInt16(1000 + index))))
            serverAddresses.append(address(UInt16(2000 + index)))
        }
        self.devices = devices
        self.serverAddresses = serverAddresses
        guard (try? bridge.join(0)) != nil, (try? bridge.join(1)) != nil, connect() else { return nil }
    }

    /// Runs ICE and DTLS in memory, 1 ms steps, until all four legs are connected (5 s at most).
    private func connect() -> Bool {
        var inFlight: [(bytes: [UInt8], from: ICETransportAddress, to: ICETransportAddress)] = []
        func carry(_ actions: [MediaLegAction]) {
            for case .send(let bytes, let from, let to) in actions { inFlight.append((bytes, from, to)) }
        }
        func carry(_ actions: [MediaTopologyAction<Int>]) {
            for case .send(_, let bytes, let from, let to) in actions { inFlight.append((bytes, from, to)) }
        }
        for index in 0..<2 {
            guard let started = try? bridge.start(index, now: now), let device = try? devices[index].core.start(now: now) else { return false }
            carry(started)
            carry(device)
        }
        for _ in 0..<5000 {
            now = now + .milliseconds(1)
            let due = inFlight
            inFlight = []
            for item in due {
                if let index = serverAddresses.firstIndex(of: item.to) {
                    carry(bridge.receive(item.bytes, from: item.from, on: index, local: item.to, now: now))
                } else if let device = devices.first(where: { $0.address == item.to }) {
                    carry(device.core.receive(item.bytes, from: item.from, on: item.to, now: now))
                }
            }
            for index in 0..<2 {
                if let deadline = bridge.nextDeadline(of: index), deadline <= now { carry(bridge.handleTimeout(of: index, now: now)) }
                if let deadline = devices[index].core.nextDeadline, deadline <= now { carry(devices[index].core.handleTimeout(now: now)) }
            }
            let connected = (0..<2).allSatisfy { index in
                devices[index].core.state == .connected
                    && bridge.withLeg(index, { (core: inout MediaLegCore) in core.state }) == .connected
            }
            if connected { return true }
        }
        return false
    }

    /// The next `count` SRTP packets of device A's stream (160-byte payloads, 20 ms apart).
    func packets(_ count: Int) -> [[UInt8]] {
        var out: [[UInt8]] = []
        out.reserveCapacity(count)
        let payload = (0..<160).map { UInt8(truncatingIfNeeded: $0 &* 7) }[...]
        for _ in 0..<count {
            sequence &+= 1
            let packet = RTPPacket(payloadType: 111, sequenceNumber: sequence, timestamp: UInt32(sequence) &* 960, ssrc: 0x5eed, payload: payload)
            for case .send(let bytes, _, _) in devices[0].core.relay(packet, now: now) { out.append(bytes) }
        }
        return out
    }

    var srtpProfile: String { (bridge.withLeg(0) { (core: inout MediaLegCore) in core.statistics.srtpProfile } ?? nil) ?? "?" }
}

/// A bridge between two forward-mode legs on the plain RTP transport, keyed with
/// AEAD_AES_128_GCM as the connected rig negotiates, and the sender's session to feed it.
private final class PlainBridgeRig {
    let bridge = RelayBridge<Int>()
    let sender: SRTPSession
    let senderAddress = ICETransportAddress(ip: .ipv4(0x7F00_0001), port: 3000)
    let legAddresses = [ICETransportAddress(ip: .ipv4(0x7F00_0001), port: 4000), ICETransportAddress(ip: .ipv4(0x7F00_0001), port: 4001)]
    private var sequence: UInt16 = 0

    init?() {
        let profile = SRTPProfile.aeadAes128Gcm
        var random = BenchRandom(seed: 17)
        let keys = (0..<3).map { _ in random.bytes(profile.keyMaterialLength) }
        guard let sender = try? SRTPSession(profile: profile, keyMaterial: keys[0], direction: .outbound) else { return nil }
        self.sender = sender
        let now = ContinuousClock.now
        let peers = [senderAddress, ICETransportAddress(ip: .ipv4(0x7F00_0001), port: 3001)]
        for leg in 0..<2 {
            var configuration = MediaLegConfiguration(plainRTP: .init(keys: .init(
                profile: profile, localKeyMaterial: keys[leg == 0 ? 1 : 2], remoteKeyMaterial: keys[leg == 0 ? 0 : 1])))
            configuration.codecs = [.opus]
            configuration.mediaMode = .forward
            var peerConfiguration = MediaLegConfiguration(plainRTP: .init())
            peerConfiguration.codecs = [.opus]
            var peer = MediaLegCore(configuration: peerConfiguration, localAddresses: [peers[leg]],
                                    now: ClockReading(instant: now, unixNanoseconds: 0), random: SystemRandomNumberGenerator())
            var core = MediaLegCore(configuration: configuration, localAddresses: [legAddresses[leg]],
                                    now: ClockReading(instant: now, unixNanoseconds: 1_800_000_000_000_000_000),
                                    random: SystemRandomNumberGenerator())
            guard let offer = try? peer.makeOffer(), let answer = try? core.answer(offer: offer),
                  (try? peer.acceptAnswer(answer)) != nil else { return nil }
            bridge.add(leg, core: core)
            guard (try? bridge.start(leg, now: now)) != nil, (try? bridge.join(leg)) != nil else { return nil }
        }
    }

    /// The next `count` SRTP packets of the sender's stream (160-byte payloads, 20 ms apart).
    func packets(_ count: Int) -> [[UInt8]] {
        let payload = (0..<160).map { UInt8(truncatingIfNeeded: $0 &* 7) }[...]
        return (0..<count).compactMap { _ in
            sequence &+= 1
            let packet = RTPPacket(payloadType: 111, sequenceNumber: sequence, timestamp: UInt32(sequence) &* 960, ssrc: 0x5eed, payload: payload)
            return (try? packet.serialized()).flatMap { try? sender.protect(rtp: $0) }
        }
    }
}

/// The in-process relay rows of `make bench` (see the comment at the top of this file).
func relayBridgeReport(seconds: Double) -> String {
    guard let rig = BridgeRig() else { return "relay     RelayBridge: the in-memory legs did not connect" }
    let batch = 20_000
    let work = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048 + 64, alignment: 16)
    defer { work.deallocate() }
    guard let plainRig = PlainBridgeRig() else { return "relay     RelayBridge: the plain RTP legs could not be set up" }
    var inPlace = (cpu: 0.0, packets: 0, forwarded: 0)
    var copying = (cpu: 0.0, packets: 0, forwarded: 0)
    var plain = (cpu: 0.0, packets: 0, forwarded: 0)
    var plainNow = ContinuousClock.now
    var rounds = 0
    while (inPlace.cpu < seconds || copying.cpu < seconds || plain.cpu < seconds) && rounds < 200 {
        rounds += 1
        let forInPlace = rig.packets(batch)
        let forCopying = rig.packets(batch)
        let from = rig.devices[0].address, local = rig.serverAddresses[0]
        var start = threadCPUSeconds()
        for packet in forInPlace {
            rig.now = rig.now + .milliseconds(20)
            packet.withUnsafeBytes { work.copyMemory(from: $0) }
            let receipt = rig.bridge.receive(buffer: work, length: packet.count, from: from, on: 0, local: local, now: rig.now)
            if let send = receipt.send { inPlace.forwarded += 1; benchmarkSink &+= send.length }
        }
        inPlace.cpu += threadCPUSeconds() - start
        inPlace.packets += forInPlace.count
        start = threadCPUSeconds()
        for packet in forCopying {
            rig.now = rig.now + .milliseconds(20)
            for case .send(_, let bytes, _, _) in rig.bridge.receive(packet, from: from, on: 0, local: local, now: rig.now) {
                copying.forwarded += 1
                benchmarkSink &+= bytes.count
            }
        }
        copying.cpu += threadCPUSeconds() - start
        copying.packets += forCopying.count
        let forPlain = plainRig.packets(batch)
        start = threadCPUSeconds()
        for packet in forPlain {
            plainNow = plainNow + .milliseconds(20)
            packet.withUnsafeBytes { work.copyMemory(from: $0) }
            let receipt = plainRig.bridge.receive(buffer: work, length: packet.count, from: plainRig.senderAddress, on: 0,
                                                  local: plainRig.legAddresses[0], now: plainNow)
            if let send = receipt.send { plain.forwarded += 1; benchmarkSink &+= send.length }
        }
        plain.cpu += threadCPUSeconds() - start
        plain.packets += forPlain.count
    }
    func row(_ name: String, _ run: (cpu: Double, packets: Int, forwarded: Int)) -> String {
        let ns = run.cpu / Double(max(run.packets, 1)) * 1e9
        return pad("relay", 10) + pad(name, 58) + lpad(String(Int(1e9 / ns)), 12) + " packets/s per core" + lpad(String(Int(ns)), 8)
            + " ns/packet, \(run.forwarded) of \(run.packets) forwarded"
    }
    return [
        "Relay per-packet path in process (two connected forward-mode legs in a RelayBridge, \(rig.srtpProfile), 172-byte packets, no syscalls):",
        row("RelayBridge.receive(buffer:) in place (parleyd's path)", inPlace),
        row("RelayBridge.receive([UInt8]) copying (parleyd before)", copying),
        row("the same in place, plain RTP + SRTP legs (relay-serve's)", plain),
    ].joined(separator: "\n")
}
