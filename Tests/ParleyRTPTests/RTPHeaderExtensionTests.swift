import Testing
import ParleyRTP

@Suite("RTP header extension elements (RFC 8285)")
struct RTPHeaderExtensionTests {
    @Test("RFC 8285 §4.2 one-byte form: RFC 6464 audio level (id 1), transport-cc (id 3), mid (id 4)")
    func chromiumOpus() throws {
        let bytes = Sample.bytes(Sample.rtpOpusOneByteExtension)
        let packet = try RTPPacket(parsing: bytes)
        #expect(packet.payloadType == 111)
        #expect(packet.sequenceNumber == 0x4a1b)
        #expect(packet.ssrc == 0x4f2a_119c)
        let ext = try #require(packet.headerExtension)
        #expect(ext.profile == 0xbede)
        #expect(ext.form == .oneByte)
        let elements = try ext.elements()
        #expect(elements == [
            .init(id: 1, data: [0xaa]),
            .init(id: 3, data: [0x00, 0x05]),
            .init(id: 4, data: Array("0".utf8)),
        ])
        // RFC 6464 §3: V bit then 7-bit level in -dBov.
        let level = try #require(ext.value(forID: 1))
        #expect(level.count == 1)
        #expect(level.first.map { $0 & 0x80 != 0 } == true)
        #expect(level.first.map { $0 & 0x7f } == 42)
        #expect(ext.value(forID: 4).map(Array.init) == Array("0".utf8))
        #expect(ext.value(forID: 2) == nil)
        #expect(packet.payload.count == 12)
        #expect(try packet.serialized() == bytes)
        // Rebuilding from the elements gives the same words.
        #expect(try RTPHeaderExtension.oneByte(elements) == ext)
    }

    @Test("RFC 8285 §4.3 two-byte form and appbits")
    func twoByte() throws {
        let bytes = Sample.bytes(Sample.rtpTwoByteExtension)
        let packet = try RTPPacket(parsing: bytes)
        let ext = try #require(packet.headerExtension)
        #expect(ext.form == .twoByte(appBits: 0))
        #expect(try ext.elements() == [.init(id: 1, data: [0xaa]), .init(id: 2, data: Array("abc".utf8))])
        #expect(try packet.serialized() == bytes)
        #expect(try RTPHeaderExtension.twoByte(ext.elements()) == ext)

        let withAppBits = try RTPHeaderExtension.twoByte([.init(id: 200, data: [])], appBits: 0xf)
        #expect(withAppBits.profile == 0x100f)
        #expect(withAppBits.form == .twoByte(appBits: 15))
        #expect(Array(withAppBits.data) == [200, 0, 0, 0])
        #expect(try withAppBits.elements() == [.init(id: 200, data: [])])
    }

    @Test("RFC 8285 §4.2 padding bytes between and after elements are skipped")
    func oneBytePadding() throws {
        let ext = RTPHeaderExtension(profile: 0xbede, data: Sample.bytes("10aa 0000 21bbcc 00")[...])
        #expect(try ext.elements() == [.init(id: 1, data: [0xaa]), .init(id: 2, data: [0xbb, 0xcc])])
        #expect(ext.value(forID: 2).map(Array.init) == [0xbb, 0xcc])
    }

    @Test("RFC 8285 §4.2 ID 15 stops processing; earlier elements stand")
    func oneByteID15() throws {
        let ext = RTPHeaderExtension(profile: 0xbede, data: Sample.bytes("10aa f0 11 22334455")[...])
        #expect(try ext.elements() == [.init(id: 1, data: [0xaa])])
        #expect(ext.value(forID: 1) != nil)
        #expect(ext.value(forID: 2) == nil)
    }

    @Test("RFC 8285 §4.2 one-byte element longer than the data is an error at its offset")
    func oneByteTruncated() {
        let ext = RTPHeaderExtension(profile: 0xbede, data: Sample.bytes("10aa 2f00")[...])
        do {
            _ = try ext.elements()
            Issue.record("decoded")
        } catch {
            #expect(error.kind == .truncated)
            #expect(error.offset == 3)
            #expect(error.description == "truncated one-byte extension element 2 at offset 3: need 16 bytes, 1 left")
        }
        #expect(ext.value(forID: 1).map(Array.init) == [0xaa])  // found before the bad element
        #expect(ext.value(forID: 2) == nil)
    }

    @Test("RFC 8285 §4.2 ID 0 with non-zero length is rejected")
    func oneByteReservedZero() {
        let ext = RTPHeaderExtension(profile: 0xbede, data: Sample.bytes("0311 2233")[...])
        #expect(throws: RTPError.self) { try ext.elements() }
    }

    @Test("RFC 8285 §4.3 two-byte element header cut by the end")
    func twoByteTruncated() {
        let ext = RTPHeaderExtension(profile: 0x1000, data: Sample.bytes("0101aa 05")[...])
        do { _ = try ext.elements(); Issue.record("decoded") } catch {
            #expect(error.kind == .truncated)
            #expect(error.offset == 3)
        }
        let long = RTPHeaderExtension(profile: 0x1000, data: Sample.bytes("01ff0000")[...])
        #expect(throws: RTPError.self) { try long.elements() }
    }

    @Test("A malformed element list does not stop the packet from parsing")
    func malformedElementsStillParse() throws {
        var bytes = Sample.bytes(Sample.rtpOpusOneByteExtension)
        bytes[16] = 0x1f  // id 1 claims 16 bytes
        let packet = try RTPPacket(parsing: bytes)
        #expect(throws: RTPError.self) { try packet.headerExtension?.elements() }
        #expect(try packet.serialized() == bytes)
    }

    @Test("RFC 8285 §4.1 builders validate IDs and lengths and pick the smaller form")
    func builders() throws {
        #expect(throws: RTPError.self) { try RTPHeaderExtension.oneByte([.init(id: 15, data: [1])]) }
        #expect(throws: RTPError.self) { try RTPHeaderExtension.oneByte([.init(id: 0, data: [1])]) }
        #expect(throws: RTPError.self) { try RTPHeaderExtension.oneByte([.init(id: 1, data: [])]) }
        #expect(throws: RTPError.self) { try RTPHeaderExtension.oneByte([.init(id: 1, data: Array(repeating: 0, count: 17))]) }
        #expect(throws: RTPError.self) { try RTPHeaderExtension.twoByte([.init(id: 0, data: [])]) }
        #expect(throws: RTPError.self) { try RTPHeaderExtension.twoByte([.init(id: 1, data: Array(repeating: 0, count: 256))]) }
        #expect(throws: RTPError.self) { try RTPHeaderExtension.twoByte([], appBits: 16) }

        let small = try RTPHeaderExtension(elements: [.init(id: 14, data: Array(repeating: 7, count: 16))])
        #expect(small.form == .oneByte)
        #expect(small.data.count == 20)
        let big = try RTPHeaderExtension(elements: [.init(id: 1, data: [1]), .init(id: 20, data: [2])])
        #expect(big.form == .twoByte(appBits: 0))
        #expect(try big.elements() == [.init(id: 1, data: [1]), .init(id: 20, data: [2])])
        let empty = try RTPHeaderExtension(elements: [])
        #expect(empty.data.isEmpty)
        #expect(try empty.elements().isEmpty)
    }
}
