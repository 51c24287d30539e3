import ParleyCallCore
import ParleyCallModel
import ParleyCrypto
import ParleyICECore
import ParleyMediaCore
import ParleyMediaLegCore
import ParleyNetCore
@testable import ParleyServer
import ParleySTUN
import ParleyTestSupport
import ParleyWireCore
import Synchronization
import Testing

/// A call from an app to a SIP party through the media anchor's gateway, on a
/// `ManualScheduler` with the sockets in memory (as `MediaAnchorVirtualTimeTests`): the
/// caller's WebRTC leg (full ICE, DTLS-SRTP, Opus) against the anchor's ICE-lite leg, and a
/// SIP peer (a plain RTP leg answering the anchor's offer with PCMU) against the anchor's
/// plain RTP leg. Audio by tone both ways, RFC 4733 events both ways, SDES, the close.
@Suite struct MediaAnchorGatewayTests {
    typealias WebDevice = MediaAnchorVirtualTimeTests.Device
    typealias Reports = MediaAnchorVirtualTimeTests.Reports

    /// An RTP packet as it arrived at the SIP peer (RFC 3550 §5.1; plain RTP leaves it
    /// readable, SRTP its header), read here so the test checks the wire, not the core.
    struct WirePacket {
        var marker: Bool
        var payloadType: UInt8
        var timestamp: UInt32
        var payload: ArraySlice<UInt8>

        init?(_ bytes: [UInt8]) {
            guard bytes.count >= 12, bytes[0] >> 6 == 2, !(192...223).contains(bytes[1]) else { return nil }
            var offset = 12 + 4 * Int(bytes[0] & 0x0f)
            if bytes[0] & 0x10 != 0 {
                guard bytes.count >= offset + 4 else { return nil }
                offset += 4 + 4 * (Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3]))
            }
            guard bytes.count >= offset else { return nil }
            marker = bytes[1] & 0x80 != 0
            payloadType = bytes[1] & 0x7f
            timestamp = bytes[4...7].reduce(0) { $0 << 8 | UInt32($1) }
            payload = bytes[offset...]
        }

        /// Its RFC 4733 §2.3 event block: event code, end bit, duration.
        var event: (code: UInt8, isEnd: Bool, duration: UInt16)? {
            guard payload.count >= 4 else { return nil }
            let block = Array(payload.suffix(4))  // the last block is this packet's (§2.5.1.5)
            return (block[0], block[1] & 0x80 != 0, UInt16(block[2]) << 8 | UInt16(block[3]))
        }
    }

    /// The SIP side: a plain RTP leg, driven by the test, that also keeps the RTP packets
    /// it received.
    final class SIPPeer {
        var core: MediaLegCore
        let address: SocketAddress
        let network: MemoryMediaNetwork
        var tone: ToneGenerator
        var received: [Int16] = []
        /// Digits it sends, as a SIP phone does: the event in place of the audio.
        var events = TelephoneEventGenerator(clockRate: 8_000)
        /// What its core reported: each event as it began and as it ended.
        var reportedEvents: [(key: Character?, isEnd: Bool)] = []
        /// Every RTP packet that arrived.
        var packets: [WirePacket] = []
        /// When false, it sends nothing (its phone went away).
        var online = true

        init(port: UInt16, frequency: Double, network: MemoryMediaNetwork, now: ContinuousClock.Instant, seed: UInt64) {
            address = .ipv4Loopback(port: port)
            self.network = network
            network.attachDevice(address)
            let local = ICETransportAddress(ip: STUNIPAddress(bytes: address.hostBytes) ?? .ipv4(0), port: port)
            var configuration = MediaLegConfiguration(plainRTP: .init())
            configuration.codecs = [.pcmu]
            core = MediaLegCore(configuration: configuration, localAddresses: [local],
                                now: ClockReading(instant: now, unixNanoseconds: 1_800_000_000_000_000_000), random: SeededGenerator(seed: seed))
            tone = ToneGenerator(frequency: frequency, amplitude: 0.3, sampleRate: 48_000)
        }

        func carry(_ actions: [MediaLegAction]) {
            for action in actions {
                switch action {
                case .send(let bytes, _, let to):
                    guard online, let destination = SocketAddress(hostBytes: to.ip.bytes, port: to.port) else { continue }
                    network.send(bytes, from: address, to: destination)
                case .receivedTelephoneEvent(let event, _):
                    reportedEvents.append((event.key, event.isEnd))
                default:
                    break
                }
            }
        }

        func step(now: ContinuousClock.Instant) {
            let local = ICETransportAddress(ip: STUNIPAddress(bytes: address.hostBytes) ?? .ipv4(0), port: address.port)
            for datagram in network.takeDeviceInbox(address) {
                let bytes = datagram.bytes
                if let packet = WirePacket(bytes) { packets.append(packet) }
                let from = ICETransportAddress(ip: STUNIPAddress(bytes: datagram.source.hostBytes) ?? .ipv4(0), port: datagram.source.port)
                carry(core.receive(bytes, from: from, on: local, now: now))
            }
            if let deadline = core.nextDeadline, deadline <= now { carry(core.handleTimeout(now: now)) }
        }

        func audio(now: ContinuousClock.Instant) {
            if let event = events.tick(timestamp: core.nextRTPTimestamp) {
                carry(core.sendTelephoneEvent(event.event, eventTimestamp: event.timestamp, marker: event.marker, now: now))
                core.skipAudioFrame()
                _ = tone.next(count: 960)
            } else if let actions = try? core.sendAudio(AudioFrame(samples: tone.next(count: 960), sampleRate: 48_000), now: now) {
                carry(actions)
            }
            received += core.playout(now: now)
        }
    }

    /// One gateway call through an anchor, set up as the engine sets it up.
    final class GatewayCall {
        let scheduler = ManualScheduler()
        let network = MemoryMediaNetwork()
        let ports: MemoryMediaPorts
        let reports = Reports()
        let anchor: MediaAnchor
        let caller: WebDevice
        let peer: SIPPeer
        let party: Party
        let callID: String
        let start: ContinuousClock.Instant
        /// The anchor's offer to the SIP party and the party's answer.
        private(set) var offer = ""
        private(set) var answer = ""

        init(offersSDES: Bool = false) throws {
            ports = MemoryMediaPorts(network: network)
            let configuration = ServerHarness.configuration(directory: ServerHarness.temporaryDirectory()) {
                $0.mediaInactivityTimeout = .seconds(3)
                $0.sipMediaOffersSDES = offersSDES
            }
            let reports = reports
            anchor = MediaAnchor(
                loop: scheduler, mediaLoops: [ManualMediaLoop(scheduler)], stopMediaLoops: {}, ports: ports,
                configuration: configuration, certificate: try DTLSCertificate.generate(), log: ServerLog(level: .error) { _ in },
                metrics: ServerMetrics(), wallClockNanoseconds: { 1_800_000_000_000_000_000 },
                report: { event, _ in reports.add(event) })
            start = scheduler.now
            caller = try WebDevice(port: 5_000, frequency: 440, network: network, now: start, seed: 1)
            peer = SIPPeer(port: 7_000, frequency: 1_000, network: network, now: start, seed: 2)
            var generator = SeededGenerator(seed: 7)
            callID = CallID.random(using: &generator)
            party = .sip(SIPParty(callID: callID, destination: .uri("bob@example.test")))
        }

        var time: ClockReading { ClockReading(instant: scheduler.now, unixMilliseconds: 1_800_000_000_000) }

        func perform(_ instruction: MediaInstruction) {
            anchor.perform(instruction, applicationKey: "app", now: time)
            scheduler.run()
        }

        /// The engine's instructions for a call to a SIP party, in its order: the caller's
        /// leg, the SIP leg's offer, the SIP answer (a 200's SDP), the bridge.
        func connect() throws {
            perform(.answerCaller(callID: callID, offer: try caller.core.makeOffer(), topology: .gateway))
            guard case .callerLegReady(let callerAnswer)? = reports.all.first else {
                throw MediaLegError(.state, "no caller leg: \(reports.all)")
            }
            try caller.core.acceptAnswer(callerAnswer)
            perform(.offerCallee(callID: callID, party: party))
            guard case .calleeLegReady(party, let sdp)? = reports.all.last else {
                throw MediaLegError(.state, "no SIP leg: \(reports.all)")
            }
            offer = sdp
            answer = try peer.core.answer(offer: sdp)
            anchor.perform(.acceptAnswer(callID: callID, party: party, answer: answer), applicationKey: "app", now: time)
            perform(.bridge(callID: callID, party: party))
            caller.carry(try caller.core.start(now: scheduler.now))
            peer.carry(try peer.core.start(now: scheduler.now))
        }

        /// `milliseconds` of virtual time in 1 ms steps, audio every 20 ms.
        func run(milliseconds: Int, callerOnline: Bool = true) {
            for step in 1...milliseconds {
                scheduler.advance(by: .milliseconds(1))
                if callerOnline { caller.step(now: scheduler.now) }
                peer.step(now: scheduler.now)
                if step % 20 == 0 {
                    if callerOnline { caller.audio(now: scheduler.now) }
                    peer.audio(now: scheduler.now)
                }
                scheduler.run()
            }
        }

        var dtmfReported: [MediaEvent] {
            reports.all.filter { if case .dtmfReceived = $0 { true } else { false } }
        }

        /// The telephone-event packets the peer received, by the payload type the answer
        /// gave telephone-event.
        var eventPacketsAtPeer: [(packet: WirePacket, event: (code: UInt8, isEnd: Bool, duration: UInt16))] {
            let type = Self.payloadType(of: "telephone-event/8000", in: answer)
            return peer.packets.compactMap { packet in
                guard packet.payloadType == type, let event = packet.event else { return nil }
                return (packet, event)
            }
        }

        static func payloadType(of encoding: String, in sdp: String) -> UInt8? {
            for line in sdp.split(separator: "\r\n") where line.hasPrefix("a=rtpmap:") && line.hasSuffix(" " + encoding) {
                return UInt8(line.dropFirst("a=rtpmap:".count).prefix { $0 != " " })
            }
            return nil
        }

        static func dominant(_ samples: [Int16]) -> Double {
            FrequencyAnalysis.dominantFrequency(samples: Array(samples.suffix(48_000)), sampleRate: 48_000) ?? 0
        }
    }

    @Test func aSIPLegOffersPlainRTPWithG711FirstAndTheAnnouncedAddress() throws {
        let call = try GatewayCall()
        try call.connect()
        let mLine = try #require(call.offer.split(separator: "\r\n").first { $0.hasPrefix("m=audio ") })
        let fields = mLine.split(separator: " ")
        #expect(fields[2] == "RTP/AVP", "\(mLine)")
        // PCMU (0), PCMA (8), then Opus and telephone-event on dynamic types.
        #expect(Array(fields[3...4]) == ["0", "8"], "\(mLine)")
        #expect(GatewayCall.payloadType(of: "opus/48000/2", in: call.offer) != nil)
        #expect(GatewayCall.payloadType(of: "telephone-event/8000", in: call.offer) != nil)
        #expect(!call.offer.contains("a=crypto") && !call.offer.contains("a=ice-") && !call.offer.contains("a=fingerprint"))
        #expect(!call.offer.contains("red/48000"), "no RFC 2198 RED toward a SIP party")
        // The address its socket is on (no announced address here), its port in m=.
        #expect(call.offer.contains("c=IN IP4 127.0.0.1"))
        #expect(fields[1] == "30001", "the second port of the pool: \(mLine)")
        call.anchor.closeEverything()
    }

    @Test func tonesCrossTheGatewayBothWaysAndBothLegsConnect() throws {
        let call = try GatewayCall()
        try call.connect()
        call.run(milliseconds: 3_000)
        #expect(call.reports.all.contains(.legConnected(.caller)))
        #expect(call.reports.all.contains(.legConnected(.callee(call.party))))
        #expect(!call.reports.all.contains { if case .legFailed = $0 { true } else { false } }, "\(call.reports.all)")
        let heardByPeer = GatewayCall.dominant(call.peer.received)
        let heardByCaller = GatewayCall.dominant(call.caller.received)
        #expect(abs(heardByPeer - 440) < 15, "the SIP peer heard \(heardByPeer) Hz")
        #expect(abs(heardByCaller - 1_000) < 15, "the caller heard \(heardByCaller) Hz")
        // PCMU on the SIP side: what the peer got is G.711, 20 ms a packet, transcoded.
        let audio = call.peer.packets.filter { $0.payloadType == 0 }
        #expect(audio.count > 120, "\(audio.count) PCMU packets")
        #expect(zip(audio, audio.dropFirst()).allSatisfy { $1.timestamp &- $0.timestamp == 160 })

        // Closing returns both legs' figures, plain RTP's included, and both ports.
        let statistics = call.anchor.closeAll(callID: call.callID, now: call.scheduler.now)
        #expect((statistics[.caller]?.rtp.packetsReceived ?? 0) > 100)
        #expect((statistics[.callee(call.party)]?.rtp.packetsReceived ?? 0) > 100)
        #expect(statistics[.callee(call.party)]?.codec == "PCMU/8000")
        #expect(statistics[.callee(call.party)]?.plainRTP?.latched == true)
        #expect(call.ports.allocatedCount == 0)
        #expect(call.anchor.legCount == 0)
        // The gateway's clock stopped with the call: nothing more is sent.
        let sent = call.peer.packets.count
        call.run(milliseconds: 200, callerOnline: false)
        #expect(call.peer.packets.count == sent)
        call.anchor.closeEverything()
    }

    @Test func digitsFromTheSIPPeerReachTheEngineOncePerDigit() throws {
        let call = try GatewayCall()
        try call.connect()
        call.run(milliseconds: 1_000)
        // 1, #, 1 again: a digit repeated is a new event, and reported again.
        let accepted = call.peer.events.enqueueDigits([1, 11, 1])
        #expect(accepted)
        call.run(milliseconds: 1_500)
        let leg = CallLegID.callee(call.party)
        #expect(call.dtmfReported == [
            .dtmfReceived(leg, digits: "1"), .dtmfReceived(leg, digits: "#"), .dtmfReceived(leg, digits: "1"),
        ])
        call.anchor.closeEverything()
    }

    @Test func sendDTMFTowardTheSIPLegArrivesAsRFC4733Events() throws {
        let call = try GatewayCall()
        try call.connect()
        call.run(milliseconds: 1_000)
        call.perform(.sendDTMF(callID: call.callID, leg: .callee(call.party), digits: "42#"))
        call.run(milliseconds: 1_500)

        // Reported by the peer's core once as each began and once as it ended, in order.
        #expect(call.peer.reportedEvents.map { $0.key.map(String.init) ?? "?" } == ["4", "4", "2", "2", "#", "#"])
        #expect(call.peer.reportedEvents.map(\.isEnd) == [false, true, false, true, false, true])
        // On the wire: each event one timestamp, the marker on its first packet only, the
        // duration growing in 8 kHz units, the end (800 units, 100 ms) three times.
        let packets = call.eventPacketsAtPeer
        var byTimestamp: [UInt32: [(packet: WirePacket, event: (code: UInt8, isEnd: Bool, duration: UInt16))]] = [:]
        var order: [UInt32] = []
        for item in packets {
            if byTimestamp[item.packet.timestamp] == nil { order.append(item.packet.timestamp) }
            byTimestamp[item.packet.timestamp, default: []].append(item)
        }
        #expect(order.count == 3, "\(packets.map(\.event))")
        #expect(order.compactMap { byTimestamp[$0]?.first?.event.code } == [4, 2, 11], "4, 2 and # (RFC 4733 §3.2)")
        for timestamp in order {
            let event = byTimestamp[timestamp] ?? []
            #expect(event.first?.packet.marker == true && event.dropFirst().allSatisfy { !$0.packet.marker })
            let ends = event.filter(\.event.isEnd)
            #expect(ends.count == 3 && event.suffix(3).allSatisfy(\.event.isEnd))
            #expect(ends.allSatisfy { $0.event.duration == 800 }, "\(ends.map(\.event.duration))")
            let updates = event.filter { !$0.event.isEnd }
            #expect(zip(updates, updates.dropFirst()).allSatisfy { $1.event.duration == $0.event.duration + 160 })
        }
        // Nothing was told to the engine: the events went out, none came in.
        #expect(call.dtmfReported.isEmpty)

        // Digits the gateway cannot send are refused and send nothing.
        let before = call.eventPacketsAtPeer.count
        call.perform(.sendDTMF(callID: call.callID, leg: .callee(call.party), digits: "9x"))
        call.run(milliseconds: 500)
        #expect(call.eventPacketsAtPeer.count == before)
        call.anchor.closeEverything()
    }

    @Test func anSDESOfferIsAnsweredAndCarriesSRTPBothWays() throws {
        let call = try GatewayCall(offersSDES: true)
        try call.connect()
        let mLine = try #require(call.offer.split(separator: "\r\n").first { $0.hasPrefix("m=audio ") })
        #expect(mLine.split(separator: " ")[2] == "RTP/SAVP", "\(mLine)")
        #expect(call.offer.contains("a=crypto:"))
        #expect(call.answer.contains("a=crypto:"), "the peer answers with its own key")
        call.run(milliseconds: 3_000)
        #expect(call.reports.all.contains(.legConnected(.callee(call.party))))
        #expect(abs(GatewayCall.dominant(call.peer.received) - 440) < 15)
        #expect(abs(GatewayCall.dominant(call.caller.received) - 1_000) < 15)
        // SRTP on the wire: the PCMU payloads the peer got, read without the key, are noise
        // (a tone decoded in the clear puts nearly all its level at 440 Hz).
        let audio = call.peer.packets.filter { $0.payloadType == 0 }
        #expect(audio.count > 120)
        let pcmu = try #require(try AudioPayloadCodec(name: "PCMU"))
        let asIs = audio.suffix(50).flatMap { (try? pcmu.decode($0.payload)) ?? [] }
        let toneShare = FrequencyAnalysis.toneLevelDBFS(samples: asIs, sampleRate: 48_000, frequency: 440) - FrequencyAnalysis.rmsDBFS(samples: asIs)
        #expect(toneShare < -15, "440 Hz is \(toneShare) dB of what the payloads hold")
        let heard = call.peer.received.suffix(48_000)
        #expect(FrequencyAnalysis.toneLevelDBFS(samples: Array(heard), sampleRate: 48_000, frequency: 440) - FrequencyAnalysis.rmsDBFS(samples: Array(heard)) > -3)
        let statistics = call.anchor.closeAll(callID: call.callID, now: call.scheduler.now)
        #expect((statistics[.callee(call.party)]?.rtp.packetsReceived ?? 0) > 100)
        #expect(statistics[.callee(call.party)]?.srtpProfile != nil, "the SIP leg ran SRTP")
        #expect(call.ports.allocatedCount == 0)
        call.anchor.closeEverything()
    }

    @Test func aSilentSIPPeerIsReportedInactive() throws {
        let call = try GatewayCall()
        try call.connect()
        call.run(milliseconds: 1_000)
        call.peer.online = false
        var reported = false
        for _ in 0..<50 where !reported {
            call.run(milliseconds: 100)
            reported = call.reports.all.contains(.legInactive(.callee(call.party)))
        }
        #expect(reported, "\(call.reports.all)")
        #expect(!call.reports.all.contains(.legInactive(.caller)))
        call.anchor.closeEverything()
    }

    /// A device call's media stays a relay: a SIP party cannot join it, and DTMF asked of
    /// it sends nothing and reports nothing.
    @Test func aRelayCallTakesNoSIPLegAndSendsNoDTMF() throws {
        let call = try GatewayCall()
        call.perform(.answerCaller(callID: call.callID, offer: try call.caller.core.makeOffer(), topology: .relay))
        #expect(call.reports.all.first.map { if case .callerLegReady = $0 { true } else { false } } == true)
        call.perform(.offerCallee(callID: call.callID, party: call.party))
        guard case .legFailed(.callee(call.party), let reason)? = call.reports.all.last else {
            Issue.record("the SIP leg was not refused: \(call.reports.all)")
            return
        }
        #expect(reason.contains("gateway"), "\(reason)")
        #expect(call.ports.allocatedCount == 1, "only the caller's port")
        call.perform(.sendDTMF(callID: call.callID, leg: .caller, digits: "1"))
        #expect(call.reports.all.count == 2)
        _ = call.anchor.closeAll(callID: call.callID, now: call.scheduler.now)
        #expect(call.ports.allocatedCount == 0)
        call.anchor.closeEverything()
    }
}
