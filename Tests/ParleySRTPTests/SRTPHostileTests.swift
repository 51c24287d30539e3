import ParleySRTP
import ParleyTestSupport
import Testing

/// Hostile input never traps, never returns bytes that did not authenticate, and is counted.
@Suite("SRTP hostile input")
struct SRTPHostileTests {
    @Test("bad tag: authFailure, counted, nothing returned; the receiver is not disturbed", arguments: SRTPProfile.allCases)
    func badTag(profile: SRTPProfile) throws {
        let (sender, receiver) = try sessionPair(profile)
        let protected = try sender.protect(rtp: rtpPacket(sequence: 1, ssrc: 7))
        var forged = protected
        forged[forged.count - 1] ^= 0x01
        let error = #expect(throws: SRTPError.self) { try receiver.unprotect(srtp: forged) }
        #expect(error?.kind == .authFailure)
        #expect(error?.operation == .unprotect)
        #expect(error?.libsrtpStatus == 7)
        #expect(receiver.counters == SRTPCounters(authFailures: 1))
        #expect(receiver.rolloverCounter(ssrc: 7) == nil, "a forged first packet adds no stream")
        // The genuine packet still authenticates: the forgery left no state behind.
        _ = try receiver.unprotect(srtp: protected)
        #expect(receiver.counters == SRTPCounters(unprotected: 1, authFailures: 1))
    }

    @Test("every single-bit flip of a protected packet (header, payload, tag) is refused", arguments: SRTPProfile.allCases)
    func everyBitFlip(profile: SRTPProfile) throws {
        let (sender, receiver) = try sessionPair(profile)
        let packet = rtpPacket(sequence: 500, ssrc: 0x0bad_cafe, payloadLength: 40)
        let protected = try sender.protect(rtp: packet)
        var refused = 0
        for index in protected.indices {
            for bit in 0..<8 {
                var tampered = protected
                tampered[index] ^= 1 << bit
                #expect(throws: SRTPError.self) { try receiver.unprotect(srtp: tampered) }
                refused += 1
            }
        }
        #expect(receiver.counters.unprotected == 0)
        #expect(receiver.counters.dropped == UInt64(refused))
        #expect(try receiver.unprotect(srtp: protected) == packet)
        // Same for SRTCP.
        let report = try sender.protectRTCP(rtcp: rtcpReceiverReport(ssrc: 9))
        for index in report.indices {
            var tampered = report
            tampered[index] ^= 0x80
            #expect(throws: SRTPError.self) { try receiver.unprotectRTCP(srtcp: tampered) }
        }
        #expect(try receiver.unprotectRTCP(srtcp: report) == rtcpReceiverReport(ssrc: 9))
    }

    @Test("replayed SRTP and SRTCP: replayFail, counted", arguments: SRTPProfile.allCases)
    func replay(profile: SRTPProfile) throws {
        let (sender, receiver) = try sessionPair(profile)
        let protected = try sender.protect(rtp: rtpPacket(sequence: 10, ssrc: 1))
        _ = try receiver.unprotect(srtp: protected)
        let error = #expect(throws: SRTPError.self) { try receiver.unprotect(srtp: protected) }
        #expect(error?.kind == .replayFail)
        let report = try sender.protectRTCP(rtcp: rtcpReceiverReport(ssrc: 1))
        _ = try receiver.unprotectRTCP(srtcp: report)
        let rtcpError = #expect(throws: SRTPError.self) { try receiver.unprotectRTCP(srtcp: report) }
        #expect(rtcpError?.kind == .replayFail)
        #expect(receiver.counters == SRTPCounters(unprotected: 2, replays: 2))
    }

    @Test("sending one sequence number twice is refused (allow_repeat_tx off)")
    func repeatedTransmit() throws {
        let (sender, _) = try sessionPair(.aes128CmHmacSha1_80)
        let packet = rtpPacket(sequence: 77, ssrc: 1)
        _ = try sender.protect(rtp: packet)
        let error = #expect(throws: SRTPError.self) { try sender.protect(rtp: packet) }
        #expect(error?.kind == .replayFail)
        #expect(sender.counters == SRTPCounters(protected: 1, replays: 1))
    }

    @Test("every truncation of valid SRTP and SRTCP packets is refused", arguments: SRTPProfile.allCases)
    func truncations(profile: SRTPProfile) throws {
        let (sender, receiver) = try sessionPair(profile)
        let protected = try sender.protect(rtp: rtpPacket(sequence: 3, ssrc: 4, payloadLength: 30))
        let report = try sender.protectRTCP(rtcp: rtcpReceiverReport(ssrc: 4))
        for length in 0..<protected.count {
            let error = #expect(throws: SRTPError.self) { try receiver.unprotect(srtp: Array(protected.prefix(length))) }
            if length < 12 + profile.rtpTagLength { #expect(error?.kind == .truncated) }
        }
        for length in 0..<report.count {
            let error = #expect(throws: SRTPError.self) { try receiver.unprotectRTCP(srtcp: Array(report.prefix(length))) }
            if length < 8 + profile.rtcpTrailerLength { #expect(error?.kind == .truncated) }
        }
        #expect(receiver.counters.unprotected == 0)
        #expect(receiver.counters.dropped == UInt64(protected.count + report.count))
        // Short plain packets are refused by protect too.
        for length in 0..<12 {
            let error = #expect(throws: SRTPError.self) { try sender.protect(rtp: Array(rtpPacket(sequence: 9, ssrc: 4).prefix(length))) }
            #expect(error?.kind == .truncated)
        }
        #expect(throws: SRTPError.self) { try sender.protectRTCP(rtcp: [0x80, 0xc9, 0, 1]) }
    }

    @Test("CSRC count or extension length pointing past the end is refused before libsrtp")
    func lyingHeaderLengths() throws {
        let (_, receiver) = try sessionPair(.aes128CmHmacSha1_80)
        var packet = rtpPacket(sequence: 1, ssrc: 2, payloadLength: 20)
        packet[0] = 0x8f                      // 15 CSRCs = 60 bytes, more than the packet
        #expect(throws: SRTPError.self) { try receiver.unprotect(srtp: packet) }
        packet[0] = 0x90                      // extension with length 0xffff words
        packet[14] = 0xff; packet[15] = 0xff
        let error = #expect(throws: SRTPError.self) { try receiver.unprotect(srtp: packet) }
        #expect(error?.kind == .truncated)
    }

    @Test("10k seeded random inputs to unprotect and unprotectRTCP: all refused and counted", arguments: SRTPProfile.allCases)
    func randomBytes(profile: SRTPProfile) throws {
        let (_, receiver) = try sessionPair(profile)
        var generator = SeededGenerator(seed: profile == .aeadAes128Gcm ? 0x5eed_0002 : 0x5eed_0001)
        for round in 0..<10_000 {
            var input = generator.bytes(generator.below(200))
            // Half the inputs look like RTP/RTCP so that they reach libsrtp's own checks.
            if round % 2 == 0, !input.isEmpty { input[0] = 0x80 | (input[0] & 0x3f) }
            // Plain do/catch: #expect(throws:) per input is slow in debug builds.
            if let accepted = try? receiver.unprotect(srtp: input) { Issue.record("random input accepted: \(accepted)") }
            if let accepted = try? receiver.unprotectRTCP(srtcp: input) { Issue.record("random input accepted: \(accepted)") }
        }
        #expect(receiver.counters.unprotected == 0)
        #expect(receiver.counters.dropped == 20_000)
    }

    @Test("wrong direction, bad key material, bad window, oversized and misdescribed buffers")
    func misuse() throws {
        let (sender, receiver) = try sessionPair(.aeadAes128Gcm)
        let packet = rtpPacket(sequence: 1, ssrc: 1)
        #expect((#expect(throws: SRTPError.self) { try receiver.protect(rtp: packet) })?.kind == .wrongDirection)
        #expect((#expect(throws: SRTPError.self) { try sender.unprotect(srtp: packet) })?.kind == .wrongDirection)
        #expect((#expect(throws: SRTPError.self) { try sender.protectRTCP(rtcp: [UInt8](repeating: 0x80, count: 70_000)) })?.kind == .badParameter)
        #expect(sender.counters == SRTPCounters(otherFailures: 2))

        for bad in [Keys.aesCM, [], [UInt8](repeating: 1, count: 29)] {
            let error = #expect(throws: SRTPError.self) { try SRTPSession(profile: .aeadAes128Gcm, keyMaterial: bad, direction: .inbound) }
            #expect(error?.kind == .badParameter)
            #expect(error?.operation == .create)
        }
        for window in [0, 63, 0x8000, -1] {
            #expect(throws: SRTPError.self) {
                try SRTPSession(profile: .aes128CmHmacSha1_80, keyMaterial: Keys.aesCM, direction: .outbound, replayWindow: window)
            }
        }
        _ = try SRTPSession(profile: .aes128CmHmacSha1_80, keyMaterial: Keys.aesCM, direction: .outbound, replayWindow: 0x7fff)

        var storage = packet + [UInt8](repeating: 0, count: 15)
        storage.withUnsafeMutableBytes { raw in
            #expect((#expect(throws: SRTPError.self) { try sender.protect(buffer: raw, length: packet.count) })?.kind == .bufferTooSmall)
            #expect(throws: SRTPError.self) { try sender.protect(buffer: raw, length: raw.count + 1) }
            #expect(throws: SRTPError.self) { try sender.protect(buffer: raw, length: -1) }
        }
        var inPlace = packet
        #expect(throws: SRTPError.self) { try receiver.unprotectInPlace(&inPlace) }
        #expect(inPlace.count == packet.count, "a failed in-place call keeps the length")
    }

    @Test("error description names operation, length, kind and libsrtp status")
    func errorDescription() throws {
        let (_, receiver) = try sessionPair(.aes128CmHmacSha1_80)
        let error = #expect(throws: SRTPError.self) { try receiver.unprotect(srtp: [0x80, 1, 2]) }
        #expect(error?.description == "unprotect of 3 bytes: truncated: RTP header (with CSRCs and extension) does not fit in 3 bytes")
    }
}
