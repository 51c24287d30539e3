import Testing
import ParleyWireCore

@Suite struct ByteReaderTests {
    @Test func readsBigEndian() throws {
        var reader = ByteReader([0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a])
        #expect(try reader.readUInt8() == 0x01)
        #expect(try reader.readUInt16() == 0x0203)
        #expect(try reader.readUInt24() == 0x040506)
        #expect(try reader.readUInt32() == 0x0708090a)
        #expect(reader.isAtEnd)
    }

    @Test func throwsWithOffsetWhenShort() {
        var reader = ByteReader([0x01, 0x02, 0x03])
        _ = try? reader.readUInt16()
        #expect(throws: ByteReader.OutOfBounds(offset: 2, needed: 4, available: 1)) { try reader.readUInt32() }
        #expect(throws: ByteReader.OutOfBounds.self) { try reader.readBytes(-1) }
        #expect(reader.offset == 2)
    }

    @Test func rangeLimitsReads() throws {
        var reader = ByteReader([0, 1, 2, 3, 4], range: 1..<3)
        #expect(try reader.readBytes(2) == [1, 2])
        #expect(throws: ByteReader.OutOfBounds.self) { try reader.readUInt8() }
    }

    @Test func appendsRoundTrip() throws {
        var bytes: [UInt8] = []
        bytes.appendUInt16(0xabcd); bytes.appendUInt24(0x123456); bytes.appendUInt32(0xdeadbeef); bytes.appendUInt64(0x0102030405060708)
        var reader = ByteReader(bytes)
        #expect(try reader.readUInt16() == 0xabcd)
        #expect(try reader.readUInt24() == 0x123456)
        #expect(try reader.readUInt32() == 0xdeadbeef)
        #expect(try reader.readUInt64() == 0x0102030405060708)
    }

    @Test func hexRoundTripAndErrors() throws {
        #expect(Hex.encode([0x00, 0xff, 0x10]) == "00ff10")
        #expect(try Hex.decode("00 FF:10\n") == [0x00, 0xff, 0x10])
        #expect(try Hex.decode("0x0a0b") == [0x0a, 0x0b])
        #expect(throws: Hex.InvalidHex.self) { try Hex.decode("abc") }
        #expect(throws: Hex.InvalidHex.self) { try Hex.decode("zz") }
    }
}

@Suite struct HexFormTests {
    // RFC 8122 §5: fingerprints are upper-case hex pairs joined by colons.
    @Test func fingerprintForm() {
        #expect(Hex.encode([0xab, 0x01, 0xff], uppercase: true, separator: UInt8(ascii: ":")) == "AB:01:FF")
        #expect(Hex.encode([UInt8](), uppercase: true, separator: UInt8(ascii: ":")) == "")
        #expect(Hex.encode([0x0a]) == "0a")
    }
}
