import Testing
import ParleyRTP

@Suite("RTP packet (RFC 3550 §5.1)")
struct RTPPacketTests {
    @Test("RFC 3550 §5.1 fixed header, no CSRC, no extension")
    func minimal() throws {
        let bytes = Sample.bytes(Sample.rtpMinimal)
        let packet = try RTPPacket(parsing: bytes)
        #expect(packet.marker == false)
        #expect(packet.payloadType == 0)
        #expect(packet.sequenceNumber == 0x1234)
        #expect(packet.timestamp == 1000)
        #expect(packet.ssrc == 0xdead_beef)
        #expect(packet.csrcs.isEmpty)
        #expect(packet.headerExtension == nil)
        #expect(Array(packet.payload) == [0xff, 0xfe, 0xfd, 0xfc])
        #expect(packet.padding.isEmpty)
        #expect(packet.headerSize == 12)
        #expect(try packet.serialized() == bytes)
    }

    @Test("RFC 3550 §5.1 CSRC list, marker and padding (P bit, count in last octet)")
    func csrcAndPadding() throws {
        let bytes = Sample.bytes(Sample.rtpCSRCPadding)
        let packet = try RTPPacket(parsing: bytes)
        #expect(packet.marker)
        #expect(packet.payloadType == 8)
        #expect(packet.sequenceNumber == 0xffff)
        #expect(packet.timestamp == 0xffff_ffff)
        #expect(packet.csrcs == [0x1111_1111, 0x2222_2222])
        #expect(Array(packet.payload) == Array("abc".utf8))
        #expect(Array(packet.padding) == [0, 0, 3])
        #expect(packet.hasPadding)
        #expect(try packet.serialized() == bytes)
    }

    @Test("RFC 3550 §5.1 fifteen CSRCs, the most CC can say")
    func fifteenCSRCs() throws {
        let packet = RTPPacket(payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3,
                               csrcs: Array(1...15), payload: [9])
        let bytes = try packet.serialized()
        #expect(bytes[0] == 0x8f)
        #expect(bytes.count == 12 + 60 + 1)
        #expect(try RTPPacket(parsing: bytes) == packet)
    }

    @Test("RFC 3550 §5.3.1 generic header extension keeps profile and words")
    func genericExtension() throws {
        let bytes = Sample.bytes(Sample.rtpGenericExtension)
        let packet = try RTPPacket(parsing: bytes)
        #expect(packet.marker)
        #expect(packet.payloadType == 96)
        let ext = try #require(packet.headerExtension)
        #expect(ext.profile == 0x1234)
        #expect(ext.form == .generic)
        #expect(Array(ext.data) == [0xca, 0xfe, 0xba, 0xbe])
        #expect(try ext.elements().isEmpty)
        #expect(packet.payload.isEmpty)
        #expect(try packet.serialized() == bytes)
    }

    @Test("RFC 3550 §5.1 padding-only packet (empty payload) is valid")
    func paddingOnly() throws {
        let packet = RTPPacket(payloadType: 111, sequenceNumber: 7, timestamp: 8, ssrc: 9, payload: [],
                               padding: RTPPacket.padding(count: 255))
        let bytes = try packet.serialized()
        #expect(bytes.count == 12 + 255)
        #expect(bytes[0] == 0xa0)
        let parsed = try RTPPacket(parsing: bytes)
        #expect(parsed.payload.isEmpty)
        #expect(parsed.padding.count == 255)
        #expect(parsed == packet)
    }

    @Test("RFC 3550 A.1 padding count 0 or beyond the payload is rejected")
    func badPadding() throws {
        var bytes = Sample.bytes(Sample.rtpMinimal)
        bytes[0] |= 0x20
        bytes[bytes.count - 1] = 0
        #expect(throws: RTPError.self) { try RTPPacket(parsing: bytes) }
        do {
            _ = try RTPPacket(parsing: bytes)
        } catch {
            #expect(error.kind == .invalidPadding)
            #expect(error.offset == 15)
        }
        bytes[bytes.count - 1] = 5  // only 4 bytes follow the header
        #expect(throws: RTPError.self) { try RTPPacket(parsing: bytes) }
        bytes[bytes.count - 1] = 4
        let packet = try RTPPacket(parsing: bytes)
        #expect(packet.payload.isEmpty)
        #expect(packet.padding.count == 4)
    }

    @Test("RFC 3550 §5.1 version other than 2 is rejected with the offset")
    func version() {
        for version: UInt8 in [0, 1, 3] {
            var bytes = Sample.bytes(Sample.rtpMinimal)
            bytes[0] = bytes[0] & 0x3f | version << 6
            #expect(throws: RTPError.self) { try RTPPacket(parsing: bytes) }
            do { _ = try RTPPacket(parsing: bytes) } catch {
                #expect(error.kind == .unsupportedVersion)
                #expect(error.description == "invalid RTP header at offset 0: version \(version), expected 2")
            }
        }
    }

    @Test("Truncated header reports where and how much")
    func truncatedMessage() {
        do {
            _ = try RTPPacket(parsing: [0x80, 0, 0, 1, 0])
            Issue.record("parsed a 5-byte packet")
        } catch {
            #expect(error.kind == .truncated)
            #expect(error.description == "truncated RTP header at offset 0: need 12 bytes, 5 left")
        }
        // CC=3 but only one CSRC word present.
        var bytes = Sample.bytes(Sample.rtpMinimal)
        bytes[0] = 0x83
        do { _ = try RTPPacket(parsing: bytes) } catch {
            #expect(error.description == "truncated RTP CSRC list at offset 12: need 12 bytes, 4 left")
        }
    }

    @Test("Extension length larger than the packet is an error, not an allocation")
    func absurdExtensionLength() {
        var bytes = Sample.bytes(Sample.rtpOpusOneByteExtension)
        bytes[14] = 0xff
        bytes[15] = 0xff
        do {
            _ = try RTPPacket(parsing: bytes)
            Issue.record("parsed")
        } catch {
            #expect(error.kind == .truncated)
            #expect(error.offset == 16)
        }
    }

    @Test("Parsing a slice: payload shares the buffer, offsets count from the slice")
    func sliceParsing() throws {
        let inner = Sample.bytes(Sample.rtpMinimal)
        let buffer = [0xaa, 0xbb] + inner + [0xcc]
        let packet = try RTPPacket(parsing: buffer[2..<(2 + inner.count)])
        #expect(packet.payload.startIndex == 14)
        #expect(Array(packet.payload) == [0xff, 0xfe, 0xfd, 0xfc])
        do { _ = try RTPPacket(parsing: buffer[2..<9]) } catch {
            #expect(error.offset == 0)
        }
    }

    @Test("Serializer rejects values that do not fit their fields")
    func serializerLimits() {
        let base = RTPPacket(payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0, payload: [])
        var packet = base
        packet.payloadType = 128
        #expect(throws: RTPError.self) { try packet.serialized() }
        packet = base
        packet.csrcs = Array(repeating: 1, count: 16)
        #expect(throws: RTPError.self) { try packet.serialized() }
        packet = base
        packet.headerExtension = RTPHeaderExtension(profile: 1, data: [1, 2, 3])
        #expect(throws: RTPError.self) { try packet.serialized() }
        packet = base
        packet.padding = [0, 0, 2]
        #expect(throws: RTPError.self) { try packet.serialized() }
        do { _ = try packet.serialized() } catch {
            #expect(error.kind == .invalidValue)
        }
    }

    @Test("Round trip: build, serialize, parse gives the same value")
    func buildRoundTrip() throws {
        let ext = try RTPHeaderExtension(elements: [.init(id: 1, data: [0x90]), .init(id: 4, data: Array("audio".utf8))])
        let packet = RTPPacket(marker: true, payloadType: 111, sequenceNumber: 65535, timestamp: 123_456, ssrc: 42,
                               csrcs: [7], headerExtension: ext, payload: [1, 2, 3, 4, 5], padding: RTPPacket.padding(count: 3))
        let bytes = try packet.serialized()
        #expect(bytes.count == packet.serializedSize)
        let parsed = try RTPPacket(parsing: bytes)
        #expect(parsed == packet)
        #expect(try parsed.serialized() == bytes)
    }

    @Test("serialize(into:) appends after existing bytes")
    func appendSerialize() throws {
        let packet = try RTPPacket(parsing: Sample.bytes(Sample.rtpMinimal))
        var output: [UInt8] = [1, 2]
        try packet.serialize(into: &output)
        #expect(Array(output.dropFirst(2)) == Sample.bytes(Sample.rtpMinimal))
    }

    @Test("RFC 5761 §4 RTP/RTCP demultiplexing by the second byte")
    func multiplexing() {
        #expect(RTPMultiplexing.classify(Sample.bytes(Sample.rtpMinimal)) == .rtp)
        #expect(RTPMultiplexing.classify(Sample.bytes(Sample.rtpOpusOneByteExtension)) == .rtp)
        #expect(RTPMultiplexing.classify(Sample.bytes(Sample.rtcpChromiumSRSDES)) == .rtcp)
        #expect(RTPMultiplexing.classify(Sample.bytes(Sample.rtcpReducedSizePLI)) == .rtcp)
        #expect(RTPMultiplexing.classify([0x80, 0x00]) == .neither)
        #expect(RTPMultiplexing.classify([0x16, 0xfe, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0]) == .neither)  // DTLS
    }
}
