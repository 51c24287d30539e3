import Testing
import ParleyNetCore
import ParleySRTP
import ParleyTestSupport
@testable import ParleyMediaLegIO

/// A call anchored between peer A and peer B: the forwarder's four sessions, and the peers'
/// own sessions (A sends with A's key, B receives with the key the relay sends to B with).
private struct Bridge {
    let forwarder = SRTPForwarder()
    let peerA = SocketAddress.ipv4Loopback(port: 40_000)
    let peerB = SocketAddress.ipv4Loopback(port: 40_002)
    let sendA: SRTPSession
    let receiveB: SRTPSession
    let sendB: SRTPSession
    let receiveA: SRTPSession

    init(profileA: SRTPProfile = .aes128CmHmacSha1_80, profileB: SRTPProfile = .aes128CmHmacSha1_80) throws {
        let keyA = Self.key(profileA, seed: 1)      // A -> relay
        let keyRelayB = Self.key(profileB, seed: 2) // relay -> B
        let keyB = Self.key(profileB, seed: 3)      // B -> relay
        let keyRelayA = Self.key(profileA, seed: 4) // relay -> A
        sendA = try SRTPSession(profile: profileA, keyMaterial: keyA, direction: .outbound)
        receiveB = try SRTPSession(profile: profileB, keyMaterial: keyRelayB, direction: .inbound)
        sendB = try SRTPSession(profile: profileB, keyMaterial: keyB, direction: .outbound)
        receiveA = try SRTPSession(profile: profileA, keyMaterial: keyRelayA, direction: .inbound)
        forwarder.bridge(
            (remote: peerA,
             inbound: try SRTPSession(profile: profileA, keyMaterial: keyA, direction: .inbound),
             outbound: try SRTPSession(profile: profileA, keyMaterial: keyRelayA, direction: .outbound)),
            (remote: peerB,
             inbound: try SRTPSession(profile: profileB, keyMaterial: keyB, direction: .inbound),
             outbound: try SRTPSession(profile: profileB, keyMaterial: keyRelayB, direction: .outbound)))
    }

    static func key(_ profile: SRTPProfile, seed: UInt64) -> [UInt8] {
        var generator = SeededGenerator(seed: seed)
        return generator.bytes(profile.keyMaterialLength)
    }

    /// Runs `packet` through the forwarder in a buffer with `room` spare bytes.
    func forward(_ packet: [UInt8], from source: SocketAddress, room: Int = 64) -> (SRTPForwarder.Verdict, [UInt8]) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: packet.count + room, alignment: 16)
        defer { buffer.deallocate() }
        buffer.copyBytes(from: packet)
        let verdict = forwarder.forward(buffer: buffer, length: packet.count, from: source)
        if case .forward(let length, _) = verdict { return (verdict, Array(buffer[..<length])) }
        return (verdict, [])
    }
}

/// An Opus-sized RTP packet (payload type 111).
private func rtpPacket(sequence: UInt16, ssrc: UInt32 = 0x1234_5678, payloadBytes: Int = 150) -> [UInt8] {
    var packet: [UInt8] = [0x80, 111, UInt8(sequence >> 8), UInt8(sequence & 0xff), 0, 0, 0x03, 0xc0]
    packet += [UInt8(ssrc >> 24), UInt8(ssrc >> 16 & 0xff), UInt8(ssrc >> 8 & 0xff), UInt8(ssrc & 0xff)]
    packet += (0..<payloadBytes).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(sequence)) }
    return packet
}

/// A receiver report with no report blocks (RFC 3550 §6.4.2).
private func rtcpReceiverReport(ssrc: UInt32 = 0x1234_5678) -> [UInt8] {
    [0x80, 201, 0x00, 0x01, UInt8(ssrc >> 24), UInt8(ssrc >> 16 & 0xff), UInt8(ssrc >> 8 & 0xff), UInt8(ssrc & 0xff)]
}

@Suite struct SRTPForwarderTests {
    @Test(arguments: [
        (SRTPProfile.aes128CmHmacSha1_80, SRTPProfile.aes128CmHmacSha1_80),
        (.aeadAes128Gcm, .aeadAes128Gcm),
        (.aes128CmHmacSha1_80, .aeadAes128Gcm),
        (.aeadAes128Gcm, .aes128CmHmacSha1_80),
    ])
    func rtpRoundTripBothWays(profileA: SRTPProfile, profileB: SRTPProfile) throws {
        let bridge = try Bridge(profileA: profileA, profileB: profileB)
        for sequence in UInt16(1)...20 {
            let plain = rtpPacket(sequence: sequence)
            let (verdict, sent) = bridge.forward(try bridge.sendA.protect(rtp: plain), from: bridge.peerA)
            #expect(verdict == .forward(length: plain.count + profileB.rtpTagLength, destination: bridge.peerB))
            #expect(try bridge.receiveB.unprotect(srtp: sent) == plain)

            let reply = rtpPacket(sequence: sequence, ssrc: 0x0bad_cafe)
            let (back, sentBack) = bridge.forward(try bridge.sendB.protect(rtp: reply), from: bridge.peerB)
            #expect(back == .forward(length: reply.count + profileA.rtpTagLength, destination: bridge.peerA))
            #expect(try bridge.receiveA.unprotect(srtp: sentBack) == reply)
        }
        let totals = bridge.forwarder.totals
        #expect(totals.forwardedRTP == 40 && totals.dropped == 0)
        #expect(bridge.forwarder.counters(from: bridge.peerA)?.forwardedRTP == 20)
    }

    @Test func rtcpGoesThroughSRTCP() throws {
        let bridge = try Bridge()
        let report = rtcpReceiverReport()
        let (verdict, sent) = bridge.forward(try bridge.sendA.protectRTCP(rtcp: report), from: bridge.peerA)
        guard case .forward(_, let destination) = verdict else {
            Issue.record("RTCP not forwarded: \(verdict)")
            return
        }
        #expect(destination == bridge.peerB)
        #expect(try bridge.receiveB.unprotectRTCP(srtcp: sent) == report)
        #expect(bridge.forwarder.totals.forwardedRTCP == 1)
    }

    @Test func badTagIsDroppedAndCounted() throws {
        let bridge = try Bridge()
        var packet = try bridge.sendA.protect(rtp: rtpPacket(sequence: 7))
        packet[packet.count - 1] ^= 0x01
        let (verdict, _) = bridge.forward(packet, from: bridge.peerA)
        #expect(verdict == .drop(.authFailure))
        var payloadFlipped = try bridge.sendA.protect(rtp: rtpPacket(sequence: 8))
        payloadFlipped[40] ^= 0x80
        #expect(bridge.forward(payloadFlipped, from: bridge.peerA).0 == .drop(.authFailure))
        #expect(bridge.forwarder.counters(from: bridge.peerA)?.authFailures == 2)
        #expect(bridge.forwarder.totals.forwarded == 0)
    }

    @Test func replayIsDroppedAndCounted() throws {
        let bridge = try Bridge()
        let packet = try bridge.sendA.protect(rtp: rtpPacket(sequence: 100))
        #expect(bridge.forward(packet, from: bridge.peerA).0 == .forward(length: 162 + 10, destination: bridge.peerB))
        #expect(bridge.forward(packet, from: bridge.peerA).0 == .drop(.replay))
        #expect(bridge.forwarder.counters(from: bridge.peerA)?.replays == 1)
        #expect(bridge.forwarder.totals.forwardedRTP == 1)
    }

    @Test func everyTruncationIsDropped() throws {
        let bridge = try Bridge()
        let packet = try bridge.sendA.protect(rtp: rtpPacket(sequence: 5))
        let rtcp = try bridge.sendA.protectRTCP(rtcp: rtcpReceiverReport())
        for sample in [packet, rtcp] {
            for length in 0..<sample.count {
                let (verdict, _) = bridge.forward(Array(sample[..<length]), from: bridge.peerA)
                guard case .drop = verdict else {
                    Issue.record("truncation to \(length) bytes not dropped: \(verdict)")
                    continue
                }
            }
        }
        #expect(bridge.forwarder.totals.forwarded == 0)
        // The untruncated packets still go through: nothing was used up by the failures.
        #expect(bridge.forward(packet, from: bridge.peerA).0 == .forward(length: packet.count, destination: bridge.peerB))
    }

    @Test func garbageIsNeverForwarded() throws {
        let bridge = try Bridge()
        var generator = SeededGenerator(seed: 0x5eed)
        for _ in 0..<5_000 {
            var datagram = generator.bytes(generator.below(300))
            // Half of them look like RTP/RTCP so they reach the SRTP sessions.
            if !datagram.isEmpty, generator.below(2) == 0 { datagram[0] = 0x80 | datagram[0] & 0x3f }
            let source = generator.below(2) == 0 ? bridge.peerA : bridge.peerB
            switch bridge.forward(datagram, from: source).0 {
            case .forward: Issue.record("garbage forwarded: \(datagram)")
            case .notMedia(let kind): #expect(kind == .stun || kind == .dtls)
            case .drop: break
            }
        }
        #expect(bridge.forwarder.totals.forwarded == 0)
    }

    @Test func stunAndDTLSAreHandedBack() throws {
        let bridge = try Bridge()
        let stun: [UInt8] = [0x00, 0x01, 0x00, 0x00, 0x21, 0x12, 0xa4, 0x42] + [UInt8](repeating: 1, count: 12)
        let dtls: [UInt8] = [22, 0xfe, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        #expect(bridge.forward(stun, from: bridge.peerA).0 == .notMedia(.stun))
        #expect(bridge.forward(dtls, from: SocketAddress.ipv4Loopback(port: 9)).0 == .notMedia(.dtls))
        #expect(bridge.forward([], from: bridge.peerA).0 == .drop(.unknownKind))
        #expect(bridge.forward([0x40, 0, 0, 0], from: bridge.peerA).0 == .drop(.unknownKind))
        #expect(bridge.forwarder.notMediaCount == 2)
    }

    @Test func unknownSourceIsDropped() throws {
        let bridge = try Bridge()
        let packet = try bridge.sendA.protect(rtp: rtpPacket(sequence: 1))
        #expect(bridge.forward(packet, from: .ipv4Loopback(port: 1)).0 == .drop(.unknownSource))
        #expect(bridge.forwarder.unknownSourceDrops == 1)
        bridge.forwarder.removeRoute(from: bridge.peerA)
        #expect(bridge.forward(packet, from: bridge.peerA).0 == .drop(.unknownSource))
        #expect(bridge.forwarder.routeCount == 1)
    }

    @Test func bufferWithoutRoomForTheLongerTagIsDropped() throws {
        // GCM (16-byte tag) in, AES-CM (10) out shrinks; the reverse grows by 6 bytes.
        let bridge = try Bridge(profileA: .aes128CmHmacSha1_80, profileB: .aeadAes128Gcm)
        let packet = try bridge.sendA.protect(rtp: rtpPacket(sequence: 3))
        #expect(bridge.forward(packet, from: bridge.peerA, room: 5).0 == .drop(.noRoom))
        #expect(bridge.forwarder.counters(from: bridge.peerA)?.noRoom == 1)
        // The refused packet did not use up its index: with room it goes through.
        #expect(bridge.forward(packet, from: bridge.peerA, room: 6).0 == .forward(length: packet.count + 6, destination: bridge.peerB))
    }
}
