import Testing
import ParleyRTP

@Suite("Telephone events (RFC 4733)")
struct TelephoneEventTests {
    @Test("RFC 4733 §2.3 payload layout: event 5, E=1, volume 10, duration 800")
    func layout() throws {
        let event = try TelephoneEvent(parsing: [0x05, 0x8a, 0x03, 0x20])
        #expect(event == TelephoneEvent(event: 5, isEnd: true, volume: 10, duration: 800))
        #expect(event.key == "5")
        #expect(try event.serialized() == [0x05, 0x8a, 0x03, 0x20])
    }

    @Test("RFC 4733 §2.3 R bit kept; volume uses six bits")
    func reservedBit() throws {
        let event = try TelephoneEvent(parsing: [16, 0x7f, 0xff, 0xff])
        #expect(event.reserved)
        #expect(!event.isEnd)
        #expect(event.volume == 63)
        #expect(event.duration == 0xffff)
        #expect(event.key == nil)
        #expect(try event.serialized() == [16, 0x7f, 0xff, 0xff])
        #expect(throws: RTPError.self) { try TelephoneEvent(event: 1, volume: 64, duration: 0).serialized() }
    }

    @Test("RFC 4733 §3.2 DTMF event codes 0-15")
    func keys() {
        let keys: [Character] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "*", "#", "A", "B", "C", "D"]
        for (code, key) in keys.enumerated() {
            #expect(TelephoneEvent.eventCode(for: key) == UInt8(code))
            #expect(TelephoneEvent.key(for: UInt8(code)) == key)
        }
        #expect(TelephoneEvent.eventCode(for: "d") == 15)
        #expect(TelephoneEvent.eventCode(for: "E") == nil)
        #expect(TelephoneEvent.eventCode(for: "é") == nil)
        #expect(TelephoneEvent.key(for: 16) == nil)
        #expect(TelephoneEvent(key: "#", duration: 160)?.event == 11)
        #expect(TelephoneEvent(key: "x") == nil)
    }

    @Test("RFC 4733 §2.5.1.5 several events in one payload, inside an RTP packet")
    func inRTP() throws {
        let packet = try RTPPacket(parsing: Sample.bytes(Sample.rtpTelephoneEvent))
        #expect(packet.payloadType == 101)
        #expect(packet.marker)
        #expect(try TelephoneEvent.parseBlocks(packet.payload) == [TelephoneEvent(event: 5, isEnd: true, volume: 10, duration: 800)])
        let two = Sample.bytes("0b0a00a0 0c8a0140")
        #expect(try TelephoneEvent.parseBlocks(two[...]).map(\.key) == ["#", "A"])
        #expect(throws: RTPError.self) { try TelephoneEvent.parseBlocks(two[0..<6]) }
        #expect(throws: RTPError.self) { try TelephoneEvent.parseBlocks([]) }
    }

    @Test("Every truncation and over-length throws")
    func truncations() {
        let bytes: [UInt8] = [0x05, 0x8a, 0x03, 0x20]
        for length in 0..<4 {
            #expect(throws: RTPError.self) { try TelephoneEvent(parsing: Array(bytes.prefix(length))) }
        }
        #expect(throws: RTPError.self) { try TelephoneEvent(parsing: bytes + [0]) }
    }
}
