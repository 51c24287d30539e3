import ParleyICECore
@testable import ParleyMediaLegCore
import ParleyRTP
import ParleySRTP
import ParleyWireCore
import ParleyTestSupport
import Testing

/// The relay's per-packet path (`RelayBridge.receive(buffer:...)`, what parleyd runs and
/// `ParleyBench relay` measures) against hostile and broken input: two forward-mode legs
/// with SRTP keys given up front (plain RTP transport), a sender and a receiver whose
/// sessions the test holds. Nothing but an authentic packet of the negotiated codec from the
/// leg's peer is ever relayed, and every drop is counted.
@Suite struct RelayInPlaceDropTests {
    static let sender = ICETransportAddress(ip: .ipv4(0x7F00_0001), port: 1000)
    static let receiver = ICETransportAddress(ip: .ipv4(0x7F00_0001), port: 1001)
    static let legAddresses = [ICETransportAddress(ip: .ipv4(0x7F00_0001), port: 2000), ICETransportAddress(ip: .ipv4(0x7F00_0001), port: 2001)]

    final class Rig {
        let bridge = RelayBridge<Int>()
        let senderSession: SRTPSession
        let receiverSession: SRTPSession
        let now = ContinuousClock.now
        let work = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048 + 64, alignment: 16)
        var sequence: UInt16 = 0

        deinit { work.deallocate() }

        init(inbound: SRTPProfile, outbound: SRTPProfile) throws {
            let senderKey = (0..<inbound.keyMaterialLength).map { UInt8(truncatingIfNeeded: $0 &* 3) }
            let receiverKey = (0..<outbound.keyMaterialLength).map { UInt8(truncatingIfNeeded: $0 &* 5 &+ 1) }
            let spare = (0..<max(inbound.keyMaterialLength, outbound.keyMaterialLength)).map { UInt8(truncatingIfNeeded: 250 &- $0) }
            senderSession = try SRTPSession(profile: inbound, keyMaterial: senderKey, direction: .outbound)
            receiverSession = try SRTPSession(profile: outbound, keyMaterial: receiverKey, direction: .inbound)
            let keys: [PlainRTPTransport.Keys] = [
                .init(profile: inbound, localKeyMaterial: Array(spare.prefix(inbound.keyMaterialLength)), remoteKeyMaterial: senderKey),
                .init(profile: outbound, localKeyMaterial: receiverKey, remoteKeyMaterial: Array(spare.prefix(outbound.keyMaterialLength))),
            ]
            for leg in 0..<2 {
                var configuration = MediaLegConfiguration(plainRTP: .init(keys: keys[leg]))
                configuration.codecs = [.opus]
                configuration.mediaMode = bridge.mediaMode(for: leg)
                var peer = MediaLegCore(configuration: MediaLegConfiguration(plainRTP: .init()), localAddresses: [leg == 0 ? RelayInPlaceDropTests.sender : RelayInPlaceDropTests.receiver],
                                        now: ClockReading(instant: now, unixNanoseconds: 0), random: SeededGenerator(seed: UInt64(leg) + 1))
                var core = MediaLegCore(configuration: configuration, localAddresses: [RelayInPlaceDropTests.legAddresses[leg]],
                                        now: ClockReading(instant: now, unixNanoseconds: 0), random: SeededGenerator(seed: UInt64(leg) + 11))
                try peer.acceptAnswer(try core.answer(offer: try peer.makeOffer()))
                bridge.add(leg, core: core)
                _ = try bridge.start(leg, now: now)
                try bridge.join(leg)
            }
        }

        /// The sender's next packet: Opus payload type 111, protected.
        func packet(payload: Int = 148) throws -> [UInt8] {
            sequence &+= 1
            let plain = try RTPPacket(payloadType: 111, sequenceNumber: sequence, timestamp: UInt32(sequence) &* 960, ssrc: 0x5eed,
                                      payload: (0..<payload).map { UInt8(truncatingIfNeeded: $0 &+ Int(sequence)) }[...]).serialized()
            return try senderSession.protect(rtp: plain)
        }

        /// Hands `datagram` to leg 0 in the work buffer, as parleyd's media loop does.
        func relay(_ datagram: [UInt8], from source: ICETransportAddress = RelayInPlaceDropTests.sender,
                   room: Int? = nil) -> (receipt: MediaTopologyReceipt<Int>, sent: [UInt8]?) {
            let buffer = UnsafeMutableRawBufferPointer(rebasing: work[..<(room ?? work.count)])
            datagram.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<min($0.count, buffer.count)])) }
            let receipt = bridge.receive(buffer: buffer, length: min(datagram.count, buffer.count), from: source, on: 0,
                                         local: RelayInPlaceDropTests.legAddresses[0], now: now)
            return (receipt, receipt.send.map { [UInt8](UnsafeRawBufferPointer(rebasing: work[..<$0.length])) })
        }

        func statistics(_ leg: Int) -> MediaLegStatistics {
            bridge.withLeg(leg) { (core: inout MediaLegCore) in core.statistics }!
        }
    }

    @Test(arguments: [
        (SRTPProfile.aes128CmHmacSha1_80, SRTPProfile.aes128CmHmacSha1_80),
        (.aes128CmHmacSha1_80, .aeadAes128Gcm),
        (.aeadAes128Gcm, .aeadAes128Gcm),
        (.aeadAes128Gcm, .aes128CmHmacSha1_80),
    ])
    func relaysInPlaceFromOneKeyToTheOther(inbound: SRTPProfile, outbound: SRTPProfile) throws {
        let rig = try Rig(inbound: inbound, outbound: outbound)
        for _ in 0..<50 {
            let packet = try rig.packet()
            let (receipt, sent) = rig.relay(packet)
            let bytes = try #require(sent)
            #expect(receipt.send?.leg == 1 && receipt.send?.to == Self.receiver)
            #expect(bytes.count == packet.count - inbound.rtpTagLength + outbound.rtpTagLength)
            let plain = try RTPPacket(parsing: try rig.receiverSession.unprotect(srtp: bytes))
            #expect(Array(plain.payload) == (0..<148).map { UInt8(truncatingIfNeeded: $0 &+ Int(rig.sequence)) })
            #expect(plain.payloadType == 111)
            #expect(plain.ssrc != 0x5eed)  // leg 1's own stream
        }
        #expect(rig.statistics(1).framesSent == 50)
        #expect(rig.statistics(0).dropped.isEmpty)
    }

    @Test func aBadTagIsDroppedAndCountedNeverRelayed() throws {
        let rig = try Rig(inbound: .aes128CmHmacSha1_80, outbound: .aeadAes128Gcm)
        _ = rig.relay(try rig.packet())
        var forged = try rig.packet()
        forged[forged.count - 1] ^= 0x01
        #expect(rig.relay(forged).sent == nil)
        var body = try rig.packet()
        body[20] ^= 0x80
        #expect(rig.relay(body).sent == nil)
        #expect(rig.statistics(0).dropped[.srtpAuthentication] == 2)
        #expect(rig.statistics(1).framesSent == 1)
    }

    @Test func aReplayIsDroppedAndCounted() throws {
        let rig = try Rig(inbound: .aeadAes128Gcm, outbound: .aeadAes128Gcm)
        let packet = try rig.packet()
        #expect(rig.relay(packet).sent != nil)
        #expect(rig.relay(packet).sent == nil)
        #expect(rig.statistics(0).dropped[.srtpReplay] == 1)
        #expect(rig.statistics(1).framesSent == 1)
    }

    @Test func everyTruncationIsDropped() throws {
        let rig = try Rig(inbound: .aes128CmHmacSha1_80, outbound: .aes128CmHmacSha1_80)
        let packet = try rig.packet()
        for length in 0..<packet.count {
            #expect(rig.relay(Array(packet.prefix(length))).sent == nil, "relayed \(length) of \(packet.count) bytes")
        }
        #expect(rig.relay(packet).sent != nil)  // the whole packet still goes: nothing used up its index
        #expect(rig.statistics(1).framesSent == 1)
    }

    @Test func garbageIsNeverRelayed() throws {
        let rig = try Rig(inbound: .aes128CmHmacSha1_80, outbound: .aeadAes128Gcm)
        _ = rig.relay(try rig.packet())  // latches onto the sender
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var bytes = (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            if bytes.count >= 2, Bool.random(using: &random) { bytes[0] = 0x80; bytes[1] = 111 }  // looks like our RTP
            #expect(rig.relay(bytes).sent == nil)
        }
        #expect(rig.statistics(1).framesSent == 1)
    }

    @Test func rtcpEndsAtTheLegAndSTUNOrDTLSAreRefused() throws {
        let rig = try Rig(inbound: .aes128CmHmacSha1_80, outbound: .aes128CmHmacSha1_80)
        _ = rig.relay(try rig.packet())
        let report = try RTCPCompoundPacket(packets: [.receiverReport(RTCPReceiverReport(ssrc: 0x5eed))]).serialized()
        #expect(rig.relay(try rig.senderSession.protectRTCP(rtcp: report)).sent == nil)
        #expect(rig.statistics(0).rtcpReportsReceived == 1)
        #expect(rig.relay([0x00, 0x01, 0x00, 0x00] + [UInt8](repeating: 0, count: 16)).sent == nil)
        #expect(rig.relay([22, 254, 253] + [UInt8](repeating: 0, count: 10)).sent == nil)
        let dropped = rig.statistics(0).dropped
        #expect(dropped[.stun] == 1 && dropped[.dtls] == 1, "\(dropped)")
    }

    @Test func anotherSourceIsDroppedOnceLatched() throws {
        let rig = try Rig(inbound: .aes128CmHmacSha1_80, outbound: .aes128CmHmacSha1_80)
        #expect(rig.relay(try rig.packet()).sent != nil)
        let elsewhere = ICETransportAddress(ip: .ipv4(0x7F00_0001), port: 1999)
        #expect(rig.relay(try rig.packet(), from: elsewhere).sent == nil)
        #expect(rig.statistics(0).dropped[.foreignSource] == 1)
    }

    @Test func aBufferWithoutRoomForTheLongerTagIsNotRelayed() throws {
        let rig = try Rig(inbound: .aes128CmHmacSha1_80, outbound: .aeadAes128Gcm)
        let packet = try rig.packet()
        // GCM's tag is 6 bytes longer than HMAC-SHA1-80's: a buffer holding just the packet is short.
        #expect(rig.relay(packet, room: packet.count).sent == nil)
        #expect(rig.statistics(1).framesNotSent == 1)
        #expect(rig.relay(try rig.packet(), room: packet.count + 6).sent != nil)
    }
}
