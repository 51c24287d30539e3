import ParleyCrypto
import ParleyICECore
import ParleyMediaCore
import ParleyMediaLegCore
import ParleyRTP
import ParleyTestSupport
import ParleyWireCore

/// A gateway call on a virtual clock, no sockets: the app's WebRTC device (full ICE,
/// DTLS-SRTP, Opus with RED offered, decoding, as the SDK runs it) and its server leg
/// (ICE-lite) on one side; a SIP phone whose RTP the test builds and reads by hand (so
/// every header field and telephone-event block it receives can be checked) and its server
/// leg (plain RTP) on the other; both server legs in one `GatewayBridge`. Datagrams take
/// 2 ms; every 20 ms the device and the phone each send a frame of their tone (or a
/// telephone-event packet while one is due) and the device plays 20 ms.
final class GatewayHarness {
    /// An RTP header as it arrived (SRTP leaves the header in the clear), with when, in
    /// milliseconds since the start.
    struct Header: Hashable {
        var marker: Bool
        var payloadType: UInt8
        var sequenceNumber: UInt16
        var timestamp: UInt32
        var ssrc: UInt32
        var at: Int

        init?(_ bytes: [UInt8], at: Int) {
            guard bytes.count >= 12, (128...191).contains(bytes[0]), !(192...223).contains(bytes[1]) else { return nil }
            marker = bytes[1] & 0x80 != 0
            payloadType = bytes[1] & 0x7f
            sequenceNumber = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
            timestamp = UInt32(bytes[4]) << 24 | UInt32(bytes[5]) << 16 | UInt32(bytes[6]) << 8 | UInt32(bytes[7])
            ssrc = UInt32(bytes[8]) << 24 | UInt32(bytes[9]) << 16 | UInt32(bytes[10]) << 8 | UInt32(bytes[11])
            self.at = at
        }
    }

    final class WebDevice {
        var core: MediaLegCore
        let address: ICETransportAddress
        var tone = ToneGenerator(frequency: 1000, amplitude: 0.3, sampleRate: 48_000)
        var heard: [Int16] = []
        /// Telephone events it sends, as libwebrtc does: the event replaces the audio.
        var events = TelephoneEventGenerator(clockRate: 48_000)
        /// What its core reported: each event as it began and as it ended.
        var reportedEvents: [(event: TelephoneEvent, timestamp: UInt32)] = []
        var arrivals: [Header] = []

        init(core: consuming MediaLegCore, address: ICETransportAddress) {
            self.core = core
            self.address = address
        }
    }

    final class Phone {
        let codec: AudioPayloadCodec
        let codecName: String
        let payloadType: UInt8
        /// Any payload type the peer names must work; this is the one SIP phones often use.
        let eventPayloadType: UInt8 = 101
        let address: ICETransportAddress
        let rtcpAddress: ICETransportAddress
        let ssrc: UInt32 = 0x5150_0001
        var sequenceNumber: UInt16 = 1000
        var timestamp: UInt32 = 90_000
        var markNext = true
        var sending = true
        var tone = ToneGenerator(frequency: 440, amplitude: 0.3, sampleRate: 48_000)
        var events: TelephoneEventGenerator
        var heard: [Int16] = []
        var received: [(packet: RTPPacket, at: Int)] = []
        var rtcpReceived: [[UInt8]] = []

        init(codec name: String, port: UInt16) throws {
            codec = try AudioPayloadCodec(name: name)!
            codecName = name
            payloadType = switch name { case "PCMU": 0; case "PCMA": 8; default: 96 }
            address = GatewayHarness.address(port)
            rtcpAddress = GatewayHarness.address(port + 1)
            events = TelephoneEventGenerator(clockRate: UInt32(codec.clockRate))
        }

        /// The offer a plain SIP phone makes: RTP/AVP, one codec, telephone-event, no
        /// rtcp-mux (its RTCP goes to the next port).
        var offer: String {
            let rate = codec.clockRate
            let map = codecName == "opus" ? "opus/48000/2" : "\(codecName)/8000"
            return [
                "v=0", "o=- 4242 1 IN IP4 127.0.0.1", "s=-", "c=IN IP4 127.0.0.1", "t=0 0",
                "m=audio \(address.port) RTP/AVP \(payloadType) \(eventPayloadType)",
                "a=rtpmap:\(payloadType) \(map)", "a=rtpmap:\(eventPayloadType) telephone-event/\(rate)",
                "a=fmtp:\(eventPayloadType) 0-16", "a=ptime:20", "a=sendrecv", "",
            ].joined(separator: "\r\n")
        }

        /// The datagram for this 20 ms: a telephone-event packet while one is due, else a
        /// frame of the tone (nil while not sending).
        func next() throws -> [UInt8]? {
            defer { timestamp &+= codec.timestampStep }
            let packet: RTPPacket
            if let event = events.tick(timestamp: timestamp) {
                packet = RTPPacket(marker: event.marker, payloadType: eventPayloadType, sequenceNumber: sequenceNumber,
                                   timestamp: event.timestamp, ssrc: ssrc, payload: try event.event.serialized()[...])
                markNext = true
            } else {
                let samples = tone.next(count: AudioPayloadCodec.frameSamples)
                guard sending else { return nil }
                packet = RTPPacket(marker: markNext, payloadType: payloadType, sequenceNumber: sequenceNumber,
                                   timestamp: timestamp, ssrc: ssrc, payload: try codec.encode(samples)[...])
                markNext = false
            }
            sequenceNumber &+= 1
            return try packet.serialized()
        }

        func receive(_ bytes: [UInt8], to: ICETransportAddress, at: Int) {
            if to == rtcpAddress || (bytes.count > 1 && (192...223).contains(bytes[1])) {
                rtcpReceived.append(bytes)
                return
            }
            guard let packet = try? RTPPacket(parsing: bytes) else { return }
            received.append((packet, at))
            if packet.payloadType == payloadType, let samples = try? codec.decode(packet.payload) { heard += samples }
        }

        /// The telephone-event packets it received, with their blocks.
        var eventPackets: [(packet: RTPPacket, event: TelephoneEvent, at: Int)] {
            received.compactMap { item in
                guard item.packet.payloadType == eventPayloadType,
                      let block = try? TelephoneEvent.parseBlocks(item.packet.payload).last else { return nil }
                return (item.packet, block, item.at)
            }
        }
    }

    let start = ContinuousClock.now
    var now: ContinuousClock.Instant
    let bridge: GatewayBridge<String>
    let device: WebDevice
    let phone: Phone
    let webServerAddress = GatewayHarness.address(2000)
    let sipServerAddress = GatewayHarness.address(3000)
    /// The SDP answers of the two server legs.
    let webAnswer: String
    let sipAnswer: String
    var inFlight: [(due: ContinuousClock.Instant, bytes: [UInt8], from: ICETransportAddress, to: ICETransportAddress)] = []
    var topologyActions: [MediaTopologyAction<String>] = []
    var elapsedMilliseconds = 0
    /// Hand the server legs' datagrams over in a buffer (parleyd's path), not as arrays.
    let inPlace: Bool
    let work = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048 + 64, alignment: 16)
    var sentFromBuffer = 0
    /// Datagrams for which this returns true are lost on the way.
    var lose: ((_ bytes: [UInt8], _ from: ICETransportAddress, _ to: ICETransportAddress) -> Bool)?

    deinit { work.deallocate() }

    static func address(_ port: UInt16) -> ICETransportAddress { ICETransportAddress(ip: .ipv4(0x7F00_0001), port: port) }

    init(phoneCodec: String = "PCMU", configuration: GatewayBridge<String>.Configuration = .init(), inPlace: Bool = false) throws {
        self.inPlace = inPlace
        now = start
        bridge = GatewayBridge(configuration: configuration)
        let wallClock = ClockReading(instant: start, unixNanoseconds: 1_800_000_000_000_000_000)
        let deviceAddress = Self.address(1000)
        var deviceConfiguration = MediaLegConfiguration(iceMode: .full, certificate: try DTLSCertificate.generate())
        deviceConfiguration.codecs = [.opus]
        var webConfiguration = MediaLegConfiguration(iceMode: .lite, certificate: try DTLSCertificate.generate())
        webConfiguration.codecs = [.opus]
        webConfiguration.mediaMode = bridge.mediaMode(for: "web")
        var sipConfiguration = MediaLegConfiguration(plainRTP: .init())
        sipConfiguration.mediaMode = bridge.mediaMode(for: "sip")
        var deviceCore = MediaLegCore(configuration: deviceConfiguration, localAddresses: [deviceAddress], now: wallClock, random: SeededGenerator(seed: 11))
        var web = MediaLegCore(configuration: webConfiguration, localAddresses: [webServerAddress], now: wallClock, random: SeededGenerator(seed: 21))
        var sip = MediaLegCore(configuration: sipConfiguration, localAddresses: [sipServerAddress], now: wallClock, random: SeededGenerator(seed: 31))
        phone = try Phone(codec: phoneCodec, port: 4000)
        webAnswer = try web.answer(offer: try deviceCore.makeOffer())
        try deviceCore.acceptAnswer(webAnswer)
        sipAnswer = try sip.answer(offer: phone.offer)
        bridge.add("web", core: web)
        bridge.add("sip", core: sip)
        device = WebDevice(core: deviceCore, address: deviceAddress)
        perform(try bridge.start("web", now: now))
        perform(try bridge.start("sip", now: now))
        carry(try device.core.start(now: now))
        try bridge.join("web")
        try bridge.join("sip")
    }

    /// The payload type the answer gives `encoding` (as `telephone-event/48000`).
    static func payloadType(of encoding: String, in sdp: String) -> UInt8? {
        for line in sdp.split(separator: "\r\n") where line.hasPrefix("a=rtpmap:") && line.hasSuffix(" " + encoding) {
            return UInt8(line.dropFirst("a=rtpmap:".count).prefix { $0 != " " })
        }
        return nil
    }

    func carry(_ actions: [MediaLegAction]) {
        for action in actions {
            switch action {
            case .send(let bytes, let from, let to): inFlight.append((now + .milliseconds(2), bytes, from, to))
            case .receivedTelephoneEvent(let event, let timestamp): device.reportedEvents.append((event, timestamp))
            default: break
            }
        }
    }

    func perform(_ actions: [MediaTopologyAction<String>]) {
        topologyActions += actions
        for case .send(_, let bytes, let from, let to) in actions { inFlight.append((now + .milliseconds(2), bytes, from, to)) }
    }

    /// Delivers a datagram to a server leg at once, as if `from` had sent it.
    func inject(_ bytes: [UInt8], from: ICETransportAddress, to leg: String) {
        inFlight.append((now, bytes, from, leg == "web" ? webServerAddress : sipServerAddress))
    }

    /// Runs `milliseconds` of virtual time in 1 ms steps.
    func run(milliseconds: Int, every20ms extra: (GatewayHarness) -> Void = { _ in }) throws {
        for _ in 0..<milliseconds {
            now = now + .milliseconds(1)
            elapsedMilliseconds += 1
            deliverDue()
            for leg in bridge.legIDs {
                if let deadline = bridge.nextDeadline(of: leg), deadline <= now { perform(bridge.handleTimeout(of: leg, now: now)) }
            }
            if let deadline = bridge.nextTopologyDeadline, deadline <= now { perform(bridge.handleTopologyTimeout(now: now)) }
            if let deadline = device.core.nextDeadline, deadline <= now { carry(device.core.handleTimeout(now: now)) }
            if elapsedMilliseconds % 20 == 0 {
                if let event = device.events.tick(timestamp: device.core.nextRTPTimestamp) {
                    carry(device.core.sendTelephoneEvent(event.event, eventTimestamp: event.timestamp, marker: event.marker, now: now))
                    device.core.skipAudioFrame()
                } else {
                    carry(try device.core.sendAudio(AudioFrame(samples: device.tone.next(count: 960), sampleRate: 48_000), now: now))
                }
                device.heard += device.core.playout(now: now)
                if let datagram = try phone.next() { inFlight.append((now + .milliseconds(2), datagram, phone.address, sipServerAddress)) }
                extra(self)
            }
        }
    }

    private func deliverDue() {
        var delivered = 0
        while let index = inFlight.firstIndex(where: { $0.due <= now }), delivered < 10_000 {
            delivered += 1
            let item = inFlight.remove(at: index)
            if let lose, lose(item.bytes, item.from, item.to) { continue }
            if item.to == webServerAddress || item.to == sipServerAddress {
                let leg = item.to == webServerAddress ? "web" : "sip"
                if inPlace {
                    let length = min(item.bytes.count, work.count - 64)
                    item.bytes.withUnsafeBytes { work.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<length])) }
                    let receipt = bridge.receive(buffer: work, length: length, from: item.from, on: leg, local: item.to, now: now)
                    if let send = receipt.send {
                        sentFromBuffer += 1
                        inFlight.append((now + .milliseconds(2), [UInt8](UnsafeRawBufferPointer(rebasing: work[..<send.length])), send.from, send.to))
                    }
                    perform(receipt.actions)
                } else {
                    perform(bridge.receive(item.bytes, from: item.from, on: leg, local: item.to, now: now))
                }
            } else if item.to == device.address {
                if let header = Header(item.bytes, at: elapsedMilliseconds) { device.arrivals.append(header) }
                carry(device.core.receive(item.bytes, from: item.from, on: item.to, now: now))
            } else if item.to == phone.address || item.to == phone.rtcpAddress {
                phone.receive(item.bytes, to: item.to, at: elapsedMilliseconds)
            }
        }
    }

    /// The strongest frequency in the last second of `samples` (48 kHz).
    static func dominant(_ samples: [Int16]) -> Double {
        FrequencyAnalysis.dominantFrequency(samples: Array(samples.suffix(48_000)), sampleRate: 48_000) ?? 0
    }

    /// The level of `frequency` in the last second of `samples` (48 kHz), in dBFS.
    static func level(_ samples: [Int16], at frequency: Double) -> Double {
        FrequencyAnalysis.toneLevelDBFS(samples: Array(samples.suffix(48_000)), sampleRate: 48_000, frequency: frequency)
    }

    /// The level the device and the phone send their tones at (amplitude 0.3).
    static var sentLevel: Double {
        var tone = ToneGenerator(frequency: 1000, amplitude: 0.3, sampleRate: 48_000)
        return FrequencyAnalysis.rmsDBFS(samples: tone.next(count: 48_000))
    }

    func serverStatistics(_ leg: String) -> MediaLegStatistics? {
        bridge.withLeg(leg) { (core: inout MediaLegCore) in core.statistics }
    }

    func reportedByTopology() -> [(leg: String, event: TelephoneEvent, timestamp: UInt32)] {
        topologyActions.compactMap { action in
            if case .receivedTelephoneEvent(let leg, let event, let timestamp) = action { (leg, event, timestamp) } else { nil }
        }
    }

    func drops(_ leg: String) -> [MediaLegDropReason] {
        topologyActions.compactMap { action in
            if case .dropped(leg, let reason, _, _) = action { reason } else { nil }
        }
    }
}
