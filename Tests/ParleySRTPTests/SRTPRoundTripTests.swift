import Foundation
import ParleySRTP
import Testing

@Suite("SRTP round trips")
struct SRTPRoundTripTests {
    @Test("RTP round trip, payload sizes 0...300", arguments: SRTPProfile.allCases)
    func rtpRoundTrip(profile: SRTPProfile) throws {
        let (sender, receiver) = try sessionPair(profile)
        for sequence in UInt16(0)..<301 {
            let packet = rtpPacket(sequence: sequence, ssrc: 0x1234_5678, payloadLength: Int(sequence))
            let protected = try sender.protect(rtp: packet)
            #expect(protected.count == packet.count + profile.rtpTagLength)
            #expect(protected.prefix(12) == packet.prefix(12), "header stays in the clear")
            if sequence >= 8 { #expect(protected[12..<packet.count] != packet[12...], "payload is encrypted") }
            #expect(try receiver.unprotect(srtp: protected) == packet)
        }
        #expect(sender.counters == SRTPCounters(protected: 301))
        #expect(receiver.counters == SRTPCounters(unprotected: 301))
    }

    @Test("RTCP round trip", arguments: SRTPProfile.allCases)
    func rtcpRoundTrip(profile: SRTPProfile) throws {
        let (sender, receiver) = try sessionPair(profile)
        for round in 0..<50 {
            let packet = rtcpReceiverReport(ssrc: 0xabcd_0000 + UInt32(round % 3))
            let protected = try sender.protectRTCP(rtcp: packet)
            #expect(protected.count == packet.count + profile.rtcpTrailerLength)
            #expect(try receiver.unprotectRTCP(srtcp: protected) == packet)
        }
        #expect(receiver.counters.unprotected == 50)
    }

    @Test("many SSRCs interleaved, streams added on first packet", arguments: SRTPProfile.allCases)
    func manySSRCs(profile: SRTPProfile) throws {
        let (sender, receiver) = try sessionPair(profile)
        let ssrcs = (0..<100).map { UInt32(0x1000_0000) &+ UInt32($0) &* 7919 }
        #expect(receiver.rolloverCounter(ssrc: ssrcs[0]) == nil)
        for sequence in UInt16(1000)..<1010 {
            for ssrc in ssrcs {
                let packet = rtpPacket(sequence: sequence, ssrc: ssrc, payloadLength: 40, fill: UInt8(truncatingIfNeeded: ssrc))
                #expect(try receiver.unprotect(srtp: sender.protect(rtp: packet)) == packet)
            }
        }
        for ssrc in ssrcs { #expect(receiver.rolloverCounter(ssrc: ssrc) == 0) }
        #expect(receiver.counters.unprotected == 1000)
        #expect(receiver.removeStream(ssrc: ssrcs[0]))
        #expect(!receiver.removeStream(ssrc: ssrcs[0]))
        #expect(receiver.rolloverCounter(ssrc: ssrcs[0]) == nil)
    }

    @Test("RFC 3711 §3.3.1 sequence wrap 65535 -> 0 increments the ROC", arguments: SRTPProfile.allCases)
    func sequenceWrap(profile: SRTPProfile) throws {
        let (sender, receiver) = try sessionPair(profile)
        var sequence: UInt16 = 65_400
        for _ in 0..<400 {
            let packet = rtpPacket(sequence: sequence, ssrc: 42, payloadLength: 20)
            #expect(try receiver.unprotect(srtp: sender.protect(rtp: packet)) == packet)
            sequence &+= 1
        }
        #expect(sender.rolloverCounter(ssrc: 42) == 1)
        #expect(receiver.rolloverCounter(ssrc: 42) == 1)
        #expect(receiver.counters == SRTPCounters(unprotected: 400))
    }

    @Test("in-place and raw-buffer APIs produce the array API's bytes", arguments: SRTPProfile.allCases)
    func threeAPIsAgree(profile: SRTPProfile) throws {
        let key = Keys.material(profile)
        let senders = try (0..<3).map { _ in try SRTPSession(profile: profile, keyMaterial: key, direction: .outbound) }
        let receiver = try SRTPSession(profile: profile, keyMaterial: key, direction: .inbound)
        for sequence in UInt16(7)..<12 {
            let packet = rtpPacket(sequence: sequence, ssrc: 99)
            let viaArray = try senders[0].protect(rtp: packet)

            var inPlace = packet
            inPlace.reserveCapacity(packet.count + profile.rtpTrailerLength)
            try senders[1].protectInPlace(&inPlace)
            #expect(inPlace == viaArray)

            var storage = [UInt8](repeating: 0, count: 1500)
            let length = try storage.withUnsafeMutableBytes { raw in
                for (index, byte) in packet.enumerated() { raw[index] = byte }
                return try senders[2].protect(buffer: raw, length: packet.count)
            }
            #expect(Array(storage.prefix(length)) == viaArray)

            // Unprotect alternately in place and through a raw buffer.
            if sequence % 2 == 0 {
                try receiver.unprotectInPlace(&inPlace)
                #expect(inPlace == packet)
            } else {
                let plain = try storage.withUnsafeMutableBytes { raw in try receiver.unprotect(buffer: raw, length: length) }
                #expect(Array(storage.prefix(plain)) == packet)
            }
        }
        // RTCP in place.
        var report = rtcpReceiverReport(ssrc: 5)
        try senders[0].protectRTCPInPlace(&report)
        #expect(report.count == 32 + profile.rtcpTrailerLength)
        try receiver.unprotectRTCPInPlace(&report)
        #expect(report == rtcpReceiverReport(ssrc: 5))
    }

    @Test("protect writes only the trailer after the packet (sentinel bytes untouched)", arguments: SRTPProfile.allCases)
    func writesStayInsideTrailer(profile: SRTPProfile) throws {
        let (sender, _) = try sessionPair(profile)
        for (rtcp, packet) in [(false, rtpPacket(sequence: 1, ssrc: 3, payloadLength: 160)), (true, rtcpReceiverReport(ssrc: 3))] {
            let trailer = rtcp ? profile.rtcpTrailerLength : profile.rtpTrailerLength
            var storage = packet + [UInt8](repeating: 0xee, count: trailer + 64)
            let length = try storage.withUnsafeMutableBytes { raw in
                // Only length + trailer bytes are handed over; the rest is the sentinel.
                let exact = UnsafeMutableRawBufferPointer(rebasing: raw[0..<(packet.count + trailer)])
                return rtcp ? try sender.protectRTCP(buffer: exact, length: packet.count)
                            : try sender.protect(buffer: exact, length: packet.count)
            }
            #expect(length == packet.count + trailer)
            #expect(storage[(packet.count + trailer)...].allSatisfy { $0 == 0xee })
        }
    }

    @Test("header with CSRCs and a one-byte extension stays authenticated but clear", arguments: SRTPProfile.allCases)
    func csrcAndExtension(profile: SRTPProfile) throws {
        let (sender, receiver) = try sessionPair(profile)
        let header = hex("b26f0001 00000960 0000abcd 11111111 22222222 bede0001 10aa0000")
        let packet = header + [UInt8](repeating: 0x33, count: 50)
        let protected = try sender.protect(rtp: packet)
        #expect(protected.prefix(header.count) == header[...])
        #expect(try receiver.unprotect(srtp: protected) == packet)
    }

    @Test("replay window is configurable: a packet 199 behind passes with 1024, is too old with 128")
    func replayWindowSize() throws {
        for (window, accepted) in [(1024, true), (128, false)] {
            let (sender, receiver) = try sessionPair(.aeadAes128Gcm, window: window)
            let protected = try (UInt16(0)..<300).map { try sender.protect(rtp: rtpPacket(sequence: $0, ssrc: 8, payloadLength: 10)) }
            _ = try receiver.unprotect(srtp: protected[299])
            if accepted {
                _ = try receiver.unprotect(srtp: protected[100])
                #expect(receiver.counters.unprotected == 2)
            } else {
                let error = #expect(throws: SRTPError.self) { try receiver.unprotect(srtp: protected[100]) }
                #expect(error?.kind == .replayOld)
                #expect(receiver.counters.replays == 1)
            }
            // Out of order inside the window is fine either way.
            _ = try receiver.unprotect(srtp: protected[250])
        }
    }

    @Test("counters encode as JSON with every field")
    func countersJSON() throws {
        let counters = SRTPCounters(protected: 1, unprotected: 2, authFailures: 3, replays: 4, otherFailures: 5)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(counters), as: UTF8.self)
        #expect(json == #"{"authFailures":3,"otherFailures":5,"protected":1,"replays":4,"unprotected":2}"#)
        #expect(counters.dropped == 12)
    }
}
