import Testing
import ParleyRTP

@Suite("RTCP compound packets (RFC 3550 §6, RFC 4585)")
struct RTCPTests {
    func roundTrip(_ hex: String) throws -> RTCPCompoundPacket {
        let bytes = Sample.bytes(hex)
        let compound = try RTCPCompoundPacket(parsing: bytes)
        #expect(try compound.serialized() == bytes)
        #expect(try RTCPCompoundPacket(parsing: compound.serialized()) == compound)
        return compound
    }

    func error(_ bytes: [UInt8]) -> RTPError? {
        do {
            _ = try RTCPCompoundPacket(parsing: bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test("RFC 3550 §6.4.1 SR with a report block + §6.5.1 SDES CNAME (Chromium-style compound)")
    func chromiumCompound() throws {
        let compound = try roundTrip(Sample.rtcpChromiumSRSDES)
        #expect(compound.packets.count == 2)
        #expect(compound.padding.isEmpty)
        guard case .senderReport(let sr) = compound.packets[0] else { Issue.record("not SR"); return }
        #expect(sr.ssrc == 0x4f2a_119c)
        #expect(sr.ntpTimestamp.seconds == 0xe9b3_4c71)
        #expect(sr.ntpTimestamp.fraction == 0x8a3d_70a3)
        #expect(sr.ntpTimestamp.compact == 0x4c71_8a3d)
        #expect(sr.rtpTimestamp == 0x5c3e_8a40)
        #expect(sr.packetCount == 500)
        #expect(sr.octetCount == 80000)
        #expect(sr.profileExtension.isEmpty)
        #expect(sr.reportBlocks == [RTCPReportBlock(
            ssrc: 0x9a1b_2c3d, fractionLost: 5, cumulativeLost: 12, extendedHighestSequenceNumber: 0x0001_4a2b,
            jitter: 35, lastSenderReport: 0x4c70_f5c2, delaySinceLastSenderReport: 0x8000)])
        guard case .sourceDescription(let sdes) = compound.packets[1] else { Issue.record("not SDES"); return }
        #expect(sdes.chunks.count == 1)
        #expect(sdes.chunks[0].ssrc == 0x4f2a_119c)
        #expect(sdes.chunks[0].cname == "k4n5Xp2v3QWe0LZs")
        #expect(compound.packets.map(\.packetType) == [200, 202])
    }

    @Test("Building the Chromium-style compound by hand gives the sample bytes")
    func buildChromiumCompound() throws {
        let compound = RTCPCompoundPacket(packets: [
            .senderReport(RTCPSenderReport(
                ssrc: 0x4f2a_119c, ntpTimestamp: NTPTimestamp(seconds: 0xe9b3_4c71, fraction: 0x8a3d_70a3),
                rtpTimestamp: 0x5c3e_8a40, packetCount: 500, octetCount: 80000,
                reportBlocks: [RTCPReportBlock(ssrc: 0x9a1b_2c3d, fractionLost: 5, cumulativeLost: 12,
                                               extendedHighestSequenceNumber: 0x0001_4a2b, jitter: 35,
                                               lastSenderReport: 0x4c70_f5c2, delaySinceLastSenderReport: 0x8000)])),
            .sourceDescription(RTCPSourceDescription(chunks: [
                .init(ssrc: 0x4f2a_119c, items: [.init(type: .cname, text: "k4n5Xp2v3QWe0LZs")]),
            ])),
        ])
        #expect(try compound.serialized() == Sample.bytes(Sample.rtcpChromiumSRSDES))
    }

    @Test("RFC 3550 §6.4.1 SR profile-specific extension is preserved")
    func srProfileExtension() throws {
        let compound = try roundTrip(Sample.rtcpSRProfileExtension)
        guard case .senderReport(let sr) = compound.packets.first else { Issue.record("not SR"); return }
        #expect(sr.reportBlocks.isEmpty)
        #expect(sr.profileExtension == [0xfe, 0xed, 0xf0, 0x0d])
        #expect(sr.ntpTimestamp == NTPTimestamp(seconds: 1, fraction: 0x8000_0000))
    }

    @Test("RFC 3550 §6.4.2 RR + §6.6 BYE with reason, padding on the last packet")
    func receiverReportAndGoodbye() throws {
        let compound = try roundTrip(Sample.rtcpRRByePadded)
        #expect(compound.packets == [
            .receiverReport(RTCPReceiverReport(ssrc: 0xdead_beef)),
            .goodbye(RTCPGoodbye(ssrcs: [0xdead_beef], reason: "bye")),
        ])
        #expect(compound.padding == [0, 0, 0, 4])
        if case .goodbye(let bye) = compound.packets[1] { #expect(bye.reasonText == "bye") }
    }

    @Test("RFC 3550 §6.6 BYE reason lengths 0-5 pad to the word boundary")
    func goodbyeReasonLengths() throws {
        for length in 0...5 {
            let reason = Array(repeating: UInt8(ascii: "x"), count: length)
            let compound = RTCPCompoundPacket(packets: [.goodbye(RTCPGoodbye(ssrcs: [1, 2], reason: reason))])
            let bytes = try compound.serialized()
            #expect(bytes.count % 4 == 0)
            #expect(bytes.count == 4 + 8 + (1 + length + 3) / 4 * 4)
            #expect(try RTCPCompoundPacket(parsing: bytes) == compound)
        }
        let noReason = RTCPCompoundPacket(packets: [.goodbye(RTCPGoodbye(ssrcs: []))])
        #expect(try noReason.serialized() == [0x80, 0xcb, 0x00, 0x00])
    }

    @Test("RFC 4585 §6.2.1 Generic NACK and §6.3.1 PLI, RR with negative cumulative lost")
    func feedback() throws {
        let compound = try roundTrip(Sample.rtcpFeedback)
        guard case .receiverReport(let rr) = compound.packets[0] else { Issue.record("not RR"); return }
        #expect(rr.reportBlocks.first?.cumulativeLost == -3)
        #expect(rr.reportBlocks.first?.extendedHighestSequenceNumber == 0x10000)
        guard case .feedback(let nack) = compound.packets[1] else { Issue.record("not RTPFB"); return }
        #expect(nack.layer == .transport)
        #expect(nack.format == 1)
        #expect(nack.senderSSRC == 1)
        #expect(nack.mediaSSRC == 2)
        guard case .genericNACK(let entries) = nack.message else { Issue.record("not NACK"); return }
        #expect(entries == [.init(packetID: 300, bitmaskOfFollowingLost: 5)])
        #expect(entries[0].lostSequenceNumbers == [300, 301, 303])
        #expect(nack == RTCPFeedback.genericNACK(senderSSRC: 1, mediaSSRC: 2, lost: [300, 301, 303]))
        guard case .feedback(let pli) = compound.packets[2] else { Issue.record("not PSFB"); return }
        #expect(pli.message == .pictureLossIndication)
        #expect(pli == RTCPFeedback.pictureLossIndication(senderSSRC: 1, mediaSSRC: 2))
    }

    @Test("RFC 4585 §6.2.1 NACK builder groups by 16 and wraps past 65535")
    func nackBuilder() {
        let nack = RTCPFeedback.genericNACK(senderSSRC: 1, mediaSSRC: 2, lost: [65534, 65535, 0, 14, 15, 40])
        guard case .genericNACK(let entries) = nack.message else { Issue.record("not NACK"); return }
        #expect(entries == [
            .init(packetID: 65534, bitmaskOfFollowingLost: 0b1000_0000_0000_0011),
            .init(packetID: 15, bitmaskOfFollowingLost: 0),
            .init(packetID: 40, bitmaskOfFollowingLost: 0),
        ])
        #expect(entries.flatMap(\.lostSequenceNumbers) == [65534, 65535, 0, 14, 15, 40])
    }

    @Test("RFC 5104 §4.3.1 FIR entries decode; unknown FMT keeps raw FCI")
    func firAndUnknownFormat() throws {
        let fir = RTCPFeedback(layer: .payloadSpecific, format: 4, senderSSRC: 1, mediaSSRC: 0,
                               feedbackControlInformation: Sample.bytes("00000009 07000000"))
        #expect(fir.message == .fullIntraRequest([.init(ssrc: 9, sequenceNumber: 7)]))
        let twcc = RTCPFeedback(layer: .transport, format: 15, senderSSRC: 1, mediaSSRC: 2,
                                feedbackControlInformation: Sample.bytes("00010002 00000000"))
        #expect(twcc.message == nil)
        let compound = RTCPCompoundPacket(packets: [.feedback(fir), .feedback(twcc)])
        #expect(try RTCPCompoundPacket(parsing: compound.serialized()) == compound)
    }

    @Test("RFC 5506 reduced-size RTCP: a first packet that is not SR/RR is accepted")
    func reducedSize() throws {
        let compound = try roundTrip(Sample.rtcpReducedSizePLI)
        #expect(compound.packets.count == 1)
        #expect(compound.packets[0].packetType == 206)
    }

    @Test("RFC 3550 §6.5 SDES with NAME and PRIV items and an empty chunk; §6.7 APP; XR kept raw")
    func sdesAppUnknown() throws {
        let compound = try roundTrip(Sample.rtcpSDESAppXR)
        guard case .sourceDescription(let sdes) = compound.packets[0] else { Issue.record("not SDES"); return }
        #expect(sdes.chunks.count == 2)
        #expect(sdes.chunks[0].items.map(\.type) == [.cname, .name, .privateExtension])
        #expect(sdes.chunks[0].items[1].text == "Bob")
        let priv = try #require(sdes.chunks[0].items[2].privateParts)
        #expect(priv.prefix == Array("x".utf8))
        #expect(priv.value == Array("yz".utf8))
        #expect(sdes.chunks[0].items[2] == .privateExtension(prefix: Array("x".utf8), value: Array("yz".utf8)))
        #expect(sdes.chunks[1] == .init(ssrc: 0x22, items: []))
        #expect(compound.packets[1] == .applicationDefined(
            RTCPApplicationDefined(subtype: 2, ssrc: 0x11, name: Array("PRLY".utf8), data: [0xde, 0xad, 0xbe, 0xef])))
        #expect(compound.packets[2] == .unknown(RTCPUnknownPacket(packetType: 207, count: 0, body: Sample.bytes("00000011 04000000"))))
    }

    @Test("RFC 3550 §6.5 SDES item lengths 0-6 pad each chunk to the word boundary")
    func sdesPaddingLengths() throws {
        for length in 0...6 {
            let item = RTCPSourceDescription.Item(type: .tool, value: Array(repeating: 0x41, count: length))
            let compound = RTCPCompoundPacket(packets: [.sourceDescription(RTCPSourceDescription(chunks: [
                .init(ssrc: 1, items: [item]), .init(ssrc: 2, items: [item, item]),
            ]))])
            let bytes = try compound.serialized()
            #expect(bytes.count % 4 == 0)
            #expect(try RTCPCompoundPacket(parsing: bytes) == compound)
        }
    }

    @Test("RFC 3550 A.2 version must be 2 in every packet")
    func versionInEveryPacket() {
        var bytes = Sample.bytes(Sample.rtcpChromiumSRSDES)
        bytes[52] = 0x41  // SDES header, version 1
        let e = error(bytes)
        #expect(e?.kind == .unsupportedVersion)
        #expect(e?.offset == 52)
    }

    @Test("RFC 3550 A.2 lengths must add up to the datagram")
    func lengthsAddUp() {
        let good = Sample.bytes(Sample.rtcpChromiumSRSDES)
        // Trailing bytes that are not a packet header.
        #expect(error(good + [0x81, 0xca])?.kind == .truncated)
        // SDES length one word too long.
        var long = good
        long[55] = 7
        let e = error(long)
        #expect(e?.kind == .invalidLength)
        #expect(e?.offset == 54)
        #expect(e?.description == "invalid RTCP length at offset 54: packet type 202 claims 32 bytes, 28 left in the datagram")
        // SR length one word too short: its report block no longer fits.
        var short = good
        short[3] = 11
        #expect(error(short) != nil)
        // Empty datagram.
        #expect(error([])?.kind == .truncated)
        // Absurd length field.
        #expect(error([0x80, 0xc9, 0xff, 0xff, 0, 0, 0, 1])?.kind == .invalidLength)
    }

    @Test("RFC 3550 A.2 padding only on the last packet, count a non-zero multiple of 4 that fits")
    func paddingRules() {
        var first = Sample.bytes(Sample.rtcpRRByePadded)
        first[0] |= 0x20
        #expect(error(first)?.kind == .invalidPadding)
        #expect(error(first)?.offset == 0)
        for count: UInt8 in [0, 3, 5, 16] {
            var bytes = Sample.bytes(Sample.rtcpRRByePadded)
            bytes[bytes.count - 1] = count
            #expect(error(bytes)?.kind == .invalidPadding, "count \(count)")
        }
    }

    @Test("RFC 3550 §6.4 report count beyond the length is an error")
    func reportCountTooLarge() {
        var bytes = Sample.bytes(Sample.rtcpChromiumSRSDES)
        bytes[0] = 0x80 | 31
        #expect(error(bytes)?.kind == .invalidLength)
        var rr = Sample.bytes("80c90001 deadbeef")
        rr[0] = 0x81
        #expect(error(rr)?.kind == .invalidLength)
        #expect(error(Sample.bytes("80c80001 deadbeef"))?.kind == .invalidLength)  // SR without sender info
        #expect(error(Sample.bytes("80c90000"))?.kind == .invalidLength)  // RR without SSRC
        #expect(error(Sample.bytes("81cd0001 00000001"))?.kind == .invalidLength)  // FB without media SSRC
        #expect(error(Sample.bytes("80cc0001 00000001"))?.kind == .invalidLength)  // APP without name
    }

    @Test("RFC 3550 §6.5 SDES: missing END, non-zero padding, extra chunks, count too high")
    func sdesErrors() {
        // Item runs to the end without END.
        #expect(error(Sample.bytes("81ca0002 00000001 01026162"))?.kind == .truncated)
        // Non-zero octet after END.
        #expect(error(Sample.bytes("81ca0002 00000001 01016100"))?.kind == nil)
        #expect(error(Sample.bytes("81ca0002 00000001 00010000"))?.kind == .malformed)
        // Bytes after the announced chunks.
        #expect(error(Sample.bytes("81ca0003 00000001 00000000 00000002"))?.kind == .invalidLength)
        // SC=31 with room for one chunk.
        #expect(error(Sample.bytes("9fca0002 00000001 00000000")) != nil)
        // Item length beyond the packet.
        #expect(error(Sample.bytes("81ca0002 00000001 01ff0000"))?.kind == .truncated)
    }

    @Test("RFC 3550 §6.6 BYE: source count beyond length, reason beyond length, junk after reason")
    func goodbyeErrors() {
        #expect(error(Sample.bytes("82cb0001 00000001"))?.kind == .invalidLength)
        #expect(error(Sample.bytes("81cb0002 00000001 05616200"))?.kind == .truncated)
        #expect(error(Sample.bytes("81cb0002 00000001 02616201"))?.kind == .malformed)
        #expect(error(Sample.bytes("81cb0003 00000001 02616200 00000000"))?.kind == .invalidLength)
    }

    @Test("Serializer rejects counts and sizes that do not fit")
    func serializerLimits() throws {
        let blocks = Array(repeating: RTCPReportBlock(ssrc: 1, extendedHighestSequenceNumber: 1), count: 32)
        let cases: [RTCPCompoundPacket] = [
            RTCPCompoundPacket(packets: []),
            RTCPCompoundPacket(packets: [.receiverReport(RTCPReceiverReport(ssrc: 1, reportBlocks: blocks))]),
            RTCPCompoundPacket(packets: [.receiverReport(RTCPReceiverReport(ssrc: 1, profileExtension: [1]))]),
            RTCPCompoundPacket(packets: [.receiverReport(RTCPReceiverReport(ssrc: 1, reportBlocks: [
                RTCPReportBlock(ssrc: 1, cumulativeLost: 0x80_0000, extendedHighestSequenceNumber: 0)]))]),
            RTCPCompoundPacket(packets: [.goodbye(RTCPGoodbye(ssrcs: Array(repeating: 1, count: 32)))]),
            RTCPCompoundPacket(packets: [.goodbye(RTCPGoodbye(ssrcs: [], reason: Array(repeating: 1, count: 256)))]),
            RTCPCompoundPacket(packets: [.applicationDefined(RTCPApplicationDefined(subtype: 0, ssrc: 0, name: [1], data: []))]),
            RTCPCompoundPacket(packets: [.feedback(RTCPFeedback(layer: .transport, format: 32, senderSSRC: 0, mediaSSRC: 0))]),
            RTCPCompoundPacket(packets: [.unknown(RTCPUnknownPacket(packetType: 207, count: 0, body: [1, 2]))]),
            RTCPCompoundPacket(packets: [.sourceDescription(RTCPSourceDescription(chunks: [
                .init(ssrc: 1, items: [.init(type: .note, value: Array(repeating: 0, count: 256))])]))]),
            RTCPCompoundPacket(packets: [.receiverReport(RTCPReceiverReport(ssrc: 1))], padding: [0, 0, 3]),
            RTCPCompoundPacket(packets: [.receiverReport(RTCPReceiverReport(ssrc: 1))], padding: [0, 0, 0, 5]),
        ]
        for compound in cases {
            #expect(throws: RTPError.self) { try compound.serialized() }
        }
        let padded = RTCPCompoundPacket(packets: [.receiverReport(RTCPReceiverReport(ssrc: 1))],
                                        padding: RTCPCompoundPacket.padding(count: 8))
        #expect(try RTCPCompoundPacket(parsing: padded.serialized()) == padded)
    }

    @Test("Report block from A.1/A.3 state and A.8 jitter")
    func reportBlockFromState() throws {
        var state = RTPSourceState(firstSequenceNumber: 10)
        for sequence: UInt16 in [11, 12, 14] { state.update(sequenceNumber: sequence) }
        let block = RTCPReportBlock(ssrc: 5, report: state.makeReceptionReport(), jitter: 7,
                                    lastSenderReport: 0x1234_5678, delaySinceLastSenderReport: 0x10000)
        #expect(block.cumulativeLost == 1)
        #expect(block.extendedHighestSequenceNumber == 14)
        #expect(block.fractionLost == 64)  // 1 of 4 expected
        let compound = RTCPCompoundPacket(packets: [.receiverReport(RTCPReceiverReport(ssrc: 9, reportBlocks: [block]))])
        #expect(try RTCPCompoundPacket(parsing: compound.serialized()) == compound)
    }
}
