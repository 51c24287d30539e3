import ParleyWireCore
import ParleyCrypto
import ParleyICECore
import ParleyMediaCore
import ParleyMediaLegCore
import ParleyRTP
import ParleyTestSupport
import Testing

/// The relay topology on a virtual clock, no sockets: three devices (full ICE, decoding),
/// each with a server leg (ICE-lite, forward mode) in one `RelayBridge`, datagrams carried
/// in memory with 2 ms of delay.
@Suite struct RelayBridgeTests {
    final class Device {
        var core: MediaLegCore
        let address: ICETransportAddress
        var heard: [Int16] = []
        var tone: ToneGenerator
        init(core: consuming MediaLegCore, address: ICETransportAddress, frequency: Double) {
            self.core = core
            self.address = address
            tone = ToneGenerator(frequency: frequency, amplitude: 0.3, sampleRate: 48_000)
        }
    }

    final class Harness {
        let start = ContinuousClock.now
        var now: ContinuousClock.Instant
        let bridge = RelayBridge<String>()
        var devices: [String: Device] = [:]
        var serverAddresses: [String: ICETransportAddress] = [:]
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

        /// `plainDevices`: devices that do not negotiate RED with their server leg.
        init(names: [String], inPlace: Bool = false, plainDevices: Set<String> = []) throws {
            self.inPlace = inPlace
            now = start
            for (index, name) in names.enumerated() {
                let deviceAddress = Self.address(UInt16(1000 + index))
                let serverAddress = Self.address(UInt16(2000 + index))
                var deviceConfiguration = MediaLegConfiguration(iceMode: .full, certificate: try DTLSCertificate.generate())
                deviceConfiguration.codecs = [.opus]
                deviceConfiguration.opusRedundancy = !plainDevices.contains(name)
                var serverConfiguration = MediaLegConfiguration(iceMode: .lite, certificate: try DTLSCertificate.generate())
                serverConfiguration.codecs = [.opus]
                serverConfiguration.mediaMode = bridge.mediaMode(for: name)
                var device = MediaLegCore(configuration: deviceConfiguration, localAddresses: [deviceAddress], now: ClockReading(instant: start, unixNanoseconds: 1_800_000_000_000_000_000), random: SeededGenerator(seed: UInt64(10 + index)))
                var server = MediaLegCore(configuration: serverConfiguration, localAddresses: [serverAddress], now: ClockReading(instant: start, unixNanoseconds: 1_800_000_000_000_000_000), random: SeededGenerator(seed: UInt64(20 + index)))
                // The server offers to each device, as parleyd offers to a callee device.
                try device.acceptAnswer(try server.answer(offer: try device.makeOffer()))
                bridge.add(name, core: server)
                devices[name] = Device(core: device, address: deviceAddress, frequency: 400 + 300 * Double(index))
                serverAddresses[name] = serverAddress
            }
            for name in names {
                perform(try bridge.start(name, now: now))
                if let device = devices[name] { carry(try device.core.start(now: now)) }
            }
        }

        static func address(_ port: UInt16) -> ICETransportAddress { ICETransportAddress(ip: .ipv4(0x7F00_0001), port: port) }

        func carry(_ actions: [MediaLegAction]) {
            for case .send(let bytes, let from, let to) in actions { inFlight.append((now + .milliseconds(2), bytes, from, to)) }
        }

        func perform(_ actions: [MediaTopologyAction<String>]) {
            topologyActions += actions
            for case .send(_, let bytes, let from, let to) in actions { inFlight.append((now + .milliseconds(2), bytes, from, to)) }
        }

        /// Runs `milliseconds` of virtual time in 1 ms steps; every 20 ms each device sends
        /// a frame of its tone and plays 20 ms.
        func run(milliseconds: Int, every20ms extra: (Harness) -> Void = { _ in }) throws {
            for _ in 0..<milliseconds {
                now = now + .milliseconds(1)
                elapsedMilliseconds += 1
                var delivered = 0
                while let index = inFlight.firstIndex(where: { $0.due <= now }), delivered < 10_000 {
                    delivered += 1
                    let item = inFlight.remove(at: index)
                    if let lose, lose(item.bytes, item.from, item.to) { continue }
                    if let (name, _) = serverAddresses.first(where: { $0.value == item.to }) {
                        if inPlace {
                            item.bytes.withUnsafeBytes { work.copyMemory(from: $0) }
                            let receipt = bridge.receive(buffer: work, length: item.bytes.count, from: item.from, on: name, local: item.to, now: now)
                            if let send = receipt.send {
                                sentFromBuffer += 1
                                inFlight.append((now + .milliseconds(2), [UInt8](UnsafeRawBufferPointer(rebasing: work[..<send.length])), send.from, send.to))
                            }
                            perform(receipt.actions)
                        } else {
                            perform(bridge.receive(item.bytes, from: item.from, on: name, local: item.to, now: now))
                        }
                    } else if let device = devices.values.first(where: { $0.address == item.to }) {
                        carry(device.core.receive(item.bytes, from: item.from, on: item.to, now: now))
                    }
                }
                for name in bridge.legIDs {
                    if let deadline = bridge.nextDeadline(of: name), deadline <= now { perform(bridge.handleTimeout(of: name, now: now)) }
                }
                for device in devices.values {
                    if let deadline = device.core.nextDeadline, deadline <= now { carry(device.core.handleTimeout(now: now)) }
                }
                if elapsedMilliseconds % 20 == 0 {
                    for device in devices.values {
                        carry(try device.core.sendAudio(AudioFrame(samples: device.tone.next(count: 960), sampleRate: 48_000), now: now))
                        device.heard += device.core.playout(now: now)
                    }
                    extra(self)
                }
            }
        }

        func dominant(_ name: String) -> Double {
            FrequencyAnalysis.dominantFrequency(samples: Array(devices[name]!.heard.suffix(24_000)), sampleRate: 48_000) ?? 0
        }

        func serverStatistics(_ name: String) -> MediaLegStatistics? {
            bridge.withLeg(name) { (core: inout MediaLegCore) in core.statistics }
        }
    }

    @Test(arguments: [false, true])
    func packetsFlowOnlyBetweenTheTwoJoinedLegs(inPlace: Bool) throws {
        let h = try Harness(names: ["a", "b", "c"], inPlace: inPlace)
        try h.bridge.join("a")
        try h.bridge.join("b")
        #expect(throws: MediaTopologyError(.full, "a relay bridge joins two legs; [\"a\", \"b\"] already are")) { try h.bridge.join("c") }
        #expect(throws: MediaTopologyError.self) { try h.bridge.join("nobody") }
        try h.run(milliseconds: 2000)
        for name in ["a", "b", "c"] { #expect(h.serverStatistics(name)?.state == .connected) }
        // a (400 Hz) and b (700 Hz) hear each other; c (1000 Hz) rings unjoined and hears nothing.
        #expect(abs(h.dominant("a") - 700) < 10)
        #expect(abs(h.dominant("b") - 400) < 10)
        #expect(h.devices["c"]!.core.statistics.framesPlayedFromPackets == 0)
        #expect(h.serverStatistics("c")?.rtp.packetsSent == 0)
        #expect(h.serverStatistics("c")!.rtp.packetsReceived > 50)  // its device sends; nothing goes on
        let forwarded = h.topologyActions.filter { if case .forwarded = $0 { true } else { false } }.count
        #expect(forwarded > 100)
        #expect(!h.topologyActions.contains(.forwarded(from: "c", to: "a")))
        // Nothing decoded on the server; in place, every forwarded packet left from the buffer.
        #expect(h.serverStatistics("a")?.framesPlayedFromPackets == 0)
        #expect(h.sentFromBuffer == (inPlace ? forwarded : 0))
        // Both server legs counted what they relayed, as RTCP reports it.
        #expect(h.serverStatistics("b")!.rtp.packetsSent > 50 && h.serverStatistics("a")!.rtp.packetsReceived > 50)

        // b leaves (hung up): its goodbye goes out, and c can take its place.
        let removed = try #require(h.bridge.remove("b", now: h.now))
        #expect(removed.statistics.rtp.packetsSent > 50)
        #expect(removed.actions.contains { if case .stateChanged(leg: "b", .closed) = $0 { true } else { false } })
        #expect(h.bridge.joined == ["a"])
        try h.bridge.join("c")
        h.devices["a"]!.heard = []
        try h.run(milliseconds: 1000)
        #expect(abs(h.dominant("a") - 1000) < 10)
        #expect(h.bridge.remove("b", now: h.now) == nil)
    }

    @Test func telephoneEventsAreReportedOnceAsTheyBeginAndOnceAsTheyEnd() throws {
        let h = try Harness(names: ["a", "b"])
        try h.bridge.join("a")
        try h.bridge.join("b")
        try h.run(milliseconds: 1000)
        // Device a presses 5: six packets of one event, duration growing, the end sent three times.
        let device = h.devices["a"]!
        let eventStart = device.core.nextRTPTimestamp
        var sent = 0
        for step in 0..<6 {
            let event = TelephoneEvent(event: 5, isEnd: step >= 3, volume: 10, duration: UInt16(min(step + 1, 4) * 960))
            let actions = device.core.sendTelephoneEvent(event, eventTimestamp: eventStart, marker: step == 0, now: h.now)
            sent += actions.count
            h.carry(actions)
        }
        #expect(sent == 6)
        h.topologyActions = []
        try h.run(milliseconds: 100)
        let reported = h.topologyActions.compactMap { action -> (String, TelephoneEvent, UInt32)? in
            if case .receivedTelephoneEvent(let leg, let event, let timestamp) = action { (leg, event, timestamp) } else { nil }
        }
        #expect(reported.map(\.0) == ["a", "a"])
        #expect(reported.map(\.1.event) == [5, 5])
        #expect(reported.map(\.1.isEnd) == [false, true])
        #expect(reported.allSatisfy { $0.2 == eventStart })
        // Not a packet of the negotiated codec: not forwarded, not dropped.
        #expect(!h.topologyActions.contains { if case .dropped = $0 { true } else { false } })
    }
}

/// The in-place relay rewrite on its own: a plain RTP packet with CSRCs, a header
/// extension and padding, relayed by a connected forward-mode leg, leaves with that leg's
/// payload type and SSRC, offset numbering, no CSRCs or extension, its payload and padding
/// kept, and decrypts with the keys the leg's peer receives with.
@Suite struct RelayInPlaceTests {
    @Test func theRewriteStripsCSRCsAndExtensionsAndKeepsPayloadAndPadding() throws {
        let h = try RelayBridgeTests.Harness(names: ["a", "b"])
        try h.bridge.join("a")
        try h.bridge.join("b")
        try h.run(milliseconds: 600)
        let packet = RTPPacket(
            marker: true, payloadType: 99, sequenceNumber: 1000, timestamp: 5000, ssrc: 0xabcdef01, csrcs: [1, 2],
            headerExtension: RTPHeaderExtension(profile: 0xbede, data: [1, 2, 3, 4][...]), payload: [9, 8, 7, 6, 5][...],
            padding: RTPPacket.padding(count: 3))
        let plain = try packet.serialized()
        let work = UnsafeMutableRawBufferPointer.allocate(byteCount: 256, alignment: 16)
        defer { work.deallocate() }
        plain.withUnsafeBytes { work.copyMemory(from: $0) }
        let sent = try #require(h.bridge.withLeg("b") { (core: inout MediaLegCore) in
            core.relay(buffer: work, length: plain.count, now: h.now)
        } ?? nil)
        // SRTP leaves the header in the clear: read it there.
        let bytes = [UInt8](UnsafeRawBufferPointer(rebasing: work[..<sent.length]))
        #expect(bytes[0] == 0xa0)  // version 2, padding, no extension, no CSRC
        #expect(bytes[1] & 0x80 == 0x80)  // marker kept
        #expect(bytes[1] & 0x7f != 99)  // b's negotiated Opus payload type (111), not the source's
        #expect(bytes[1] & 0x7f == 111)
        let ssrc = UInt32(bytes[8]) << 24 | UInt32(bytes[9]) << 16 | UInt32(bytes[10]) << 8 | UInt32(bytes[11])
        #expect(ssrc != 0xabcdef01)
        // 12-byte header, 5 payload bytes, 3 padding bytes, then the SRTP tag (AES-CM-80 or GCM).
        #expect(sent.length - (12 + 5 + 3) == 10 || sent.length - (12 + 5 + 3) == 16, "\(sent.length)")
        #expect(sent.to == h.devices["b"]!.address)
        // The device accepts it: authenticated and counted as received.
        let before = h.devices["b"]!.core.statistics.rtp.packetsReceived
        _ = h.devices["b"]!.core.receive(bytes, from: sent.from, on: sent.to, now: h.now)
        #expect(h.devices["b"]!.core.statistics.rtp.packetsReceived == before + 1)
    }
}
