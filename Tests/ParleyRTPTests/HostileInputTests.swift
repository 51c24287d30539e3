import Testing
import ParleyRTP
import ParleyTestSupport

@Suite("Hostile input")
struct HostileInputTests {
    static let rtpSamples = [
        Sample.rtpMinimal, Sample.rtpCSRCPadding, Sample.rtpOpusOneByteExtension, Sample.rtpTwoByteExtension,
        Sample.rtpGenericExtension, Sample.rtpTelephoneEvent,
    ].map(Sample.bytes)

    static let rtcpSamples = [
        Sample.rtcpChromiumSRSDES, Sample.rtcpRRByePadded, Sample.rtcpFeedback, Sample.rtcpReducedSizePLI,
        Sample.rtcpSDESAppXR, Sample.rtcpSRProfileExtension,
    ].map(Sample.bytes)

    /// Parses as RTP; when that succeeds the bytes must come back unchanged, and the
    /// extension elements must decode or throw, never trap.
    func checkRTP(_ bytes: [UInt8]) -> Bool {
        do {
            let packet = try RTPPacket(parsing: bytes)
            #expect(try packet.serialized() == bytes)
            #expect(try RTPPacket(parsing: packet.serialized()) == packet)
            _ = try? packet.headerExtension?.elements()
            _ = packet.headerExtension?.value(forID: 1)
            _ = try? TelephoneEvent.parseBlocks(packet.payload)
            return true
        } catch {
            #expect(!error.description.isEmpty)
            return false
        }
    }

    func checkRTCP(_ bytes: [UInt8]) -> Bool {
        do {
            let compound = try RTCPCompoundPacket(parsing: bytes)
            #expect(try compound.serialized() == bytes)
            #expect(try RTCPCompoundPacket(parsing: compound.serialized()) == compound)
            for case .feedback(let feedback) in compound.packets { _ = feedback.message }
            return true
        } catch {
            #expect(!error.description.isEmpty)
            return false
        }
    }

    @Test("Every truncation of each RTP sample: header cuts throw, longer cuts parse or throw")
    func rtpTruncations() throws {
        for sample in Self.rtpSamples {
            let header = try RTPPacket(parsing: sample).headerSize
            for length in 0..<sample.count {
                let parsed = checkRTP(Array(sample.prefix(length)))
                if length < header { #expect(!parsed, "prefix \(length) of \(sample.count) parsed") }
            }
        }
    }

    @Test("Every truncation of each RTCP sample throws unless it ends on a packet boundary")
    func rtcpTruncations() throws {
        for sample in Self.rtcpSamples {
            var boundaries: Set<Int> = []
            var index = 0
            while index < sample.count {
                index += (Int(sample[index + 2]) << 8 | Int(sample[index + 3]) + 1) * 4
                boundaries.insert(index)
            }
            for length in 0..<sample.count {
                let parsed = checkRTCP(Array(sample.prefix(length)))
                // A cut on a boundary before a padded last packet is a valid shorter compound.
                #expect(parsed == boundaries.contains(length), "prefix \(length) of \(sample.count)")
            }
        }
    }

    @Test("10,000 random datagrams of 0-96 bytes through every parser")
    func randomBytes() {
        var rng = SeededGenerator(seed: 0x5eed_0001)
        var rtpParsed = 0
        var rtcpParsed = 0
        for i in 0..<10_000 {
            let length = Int.random(in: 0...96, using: &rng)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            // Give half of them version 2 so they get past the first check.
            if i % 2 == 0, !bytes.isEmpty { bytes[0] = bytes[0] & 0x3f | 0x80 }
            if checkRTP(bytes) { rtpParsed += 1 }
            if checkRTCP(bytes) { rtcpParsed += 1 }
            _ = try? TelephoneEvent(parsing: bytes)
            _ = try? TelephoneEvent.parseBlocks(bytes[...])
            let ext = RTPHeaderExtension(profile: i % 3 == 0 ? 0xbede : i % 3 == 1 ? 0x1000 : 0x1234, data: bytes[...])
            _ = try? ext.elements()
            _ = ext.value(forID: UInt8(truncatingIfNeeded: i))
        }
        #expect(rtpParsed > 500)
    }

    @Test("10,000 byte mutations of the valid samples")
    func mutations() {
        var rng = SeededGenerator(seed: 0x5eed_0002)
        for i in 0..<10_000 {
            let rtp = i % 2 == 0
            let samples = rtp ? Self.rtpSamples : Self.rtcpSamples
            var bytes = samples[i / 2 % samples.count]
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                bytes[at] = UInt8.random(in: 0...255, using: &rng)
            }
            if Int.random(in: 0..<4, using: &rng) == 0 {
                bytes.removeLast(Int.random(in: 0...min(8, bytes.count), using: &rng))
            }
            _ = rtp ? checkRTP(bytes) : checkRTCP(bytes)
        }
    }

    @Test("Absurd counts and lengths end in a typed error")
    func absurdFields() {
        // RTP: CC=15 with no CSRCs; extension of 65535 words; padding count 255 in a tiny packet.
        #expect(!checkRTP(Sample.bytes("8f000001 00000001 00000001")))
        #expect(!checkRTP(Sample.bytes("90000001 00000001 00000001 bedeffff 10aa0000")))
        #expect(!checkRTP(Sample.bytes("a0000001 00000001 00000001 ff")))
        // RTCP: length 65535 words; RC=31 in a short SR; SDES SC=31 of empty chunks but one present.
        #expect(!checkRTCP(Sample.bytes("80c8ffff 00000001")))
        #expect(!checkRTCP(Sample.bytes("9fc80006 00000001 00000000 00000000 00000000 00000000 00000000")))
        #expect(!checkRTCP(Sample.bytes("9fca0001 00000001")))
        #expect(!checkRTCP(Sample.bytes("9fcb0000")))
    }
}
