import Testing
import ParleyRTP

@Suite("Redundant audio payloads (RFC 2198)")
struct RedundantAudioPayloadTests {
    // One redundant Opus frame (PT 111, 960 ticks old, 3 bytes) and a 2-byte primary.
    // Header: F=1|PT 111 = 0xef; offset 960 = 0x3c0 << 10 = 0x0f0000; length 3:
    // 0xef0f0003. Final header 0x6f (F=0, PT 111). Then block data, then primary.
    static let oneRedundant: [UInt8] = [0xef, 0x0f, 0x00, 0x03, 0x6f, 1, 2, 3, 9, 8]

    @Test("RFC 2198 §3 layout: one 4-byte header, 1-byte final header, data in order")
    func layout() throws {
        let payload = try RedundantAudioPayload(parsing: Self.oneRedundant)
        #expect(payload.redundant == [.init(payloadType: 111, timestampOffset: 960, data: [1, 2, 3])])
        #expect(payload.primaryPayloadType == 111)
        #expect(payload.primary == [9, 8])
        #expect(try payload.serialized() == Self.oneRedundant)
        #expect(payload.serializedSize == Self.oneRedundant.count)
    }

    @Test("two redundant blocks: offsets 1920 and 960, oldest first")
    func twoBlocks() throws {
        // 1920 = 0x780 << 10 = 0x1e0000, length 2 -> 0xef1e0002.
        let bytes: [UInt8] = [0xef, 0x1e, 0x00, 0x02, 0xef, 0x0f, 0x00, 0x01, 0x6f, 7, 7, 5, 4, 4, 4]
        let payload = try RedundantAudioPayload(parsing: bytes)
        #expect(payload.redundant.map(\.timestampOffset) == [1920, 960])
        #expect(payload.redundant.map(\.data) == [[7, 7], [5]])
        #expect(payload.primary == [4, 4, 4])
        #expect(try payload.serialized() == bytes)
    }

    @Test("only a final header: primary alone, possibly empty; different block PTs kept")
    func primaryOnly() throws {
        let payload = try RedundantAudioPayload(parsing: [0x00, 0xaa])
        #expect(payload.redundant.isEmpty)
        #expect(payload.primaryPayloadType == 0)
        #expect(payload.primary == [0xaa])
        let empty = try RedundantAudioPayload(parsing: [0x6f])
        #expect(empty.primary.isEmpty)
        // Max fields: PT 127, offset 16383, length 1023 -> 0xff | 0x3fff << 10 | 0x3ff.
        let block = RedundantAudioPayload.Block(payloadType: 127, timestampOffset: 0x3fff, data: Array(repeating: 1, count: 1023))
        let big = try RedundantAudioPayload(redundant: [block], primaryPayloadType: 13, primary: []).serialized()
        #expect(Array(big.prefix(5)) == [0xff, 0xff, 0xff, 0xff, 0x0d])
        #expect(try RedundantAudioPayload(parsing: big).redundant == [block])
    }

    @Test("malformed payloads throw cleanly")
    func malformed() {
        #expect(throws: RTPError.self) { try RedundantAudioPayload(parsing: []) }
        // Header announces another header that is cut short.
        #expect(throws: RTPError.self) { try RedundantAudioPayload(parsing: [0xef, 0x0f, 0x00]) }
        // No final header after a full 4-byte header.
        #expect(throws: RTPError.self) { try RedundantAudioPayload(parsing: [0xef, 0x0f, 0x00, 0x03]) }
        // Block length 3 but only 2 bytes follow.
        #expect(throws: RTPError.self) { try RedundantAudioPayload(parsing: [0xef, 0x0f, 0x00, 0x03, 0x6f, 1, 2]) }
        do {
            _ = try RedundantAudioPayload(parsing: [0xef, 0x0f, 0x00, 0x03, 0x6f, 1, 2])
        } catch {
            #expect(error.kind == .truncated)
            #expect(error.offset == 5)
        }
    }

    @Test("serializer rejects fields that do not fit")
    func limits() {
        let long = RedundantAudioPayload.Block(payloadType: 111, timestampOffset: 960, data: Array(repeating: 0, count: 1024))
        #expect(throws: RTPError.self) { try RedundantAudioPayload(redundant: [long], primaryPayloadType: 111, primary: []).serialized() }
        let far = RedundantAudioPayload.Block(payloadType: 111, timestampOffset: 0x4000, data: [])
        #expect(throws: RTPError.self) { try RedundantAudioPayload(redundant: [far], primaryPayloadType: 111, primary: []).serialized() }
        let pt = RedundantAudioPayload.Block(payloadType: 128, timestampOffset: 0, data: [])
        #expect(throws: RTPError.self) { try RedundantAudioPayload(redundant: [pt], primaryPayloadType: 111, primary: []).serialized() }
        #expect(throws: RTPError.self) { try RedundantAudioPayload(primaryPayloadType: 200, primary: []).serialized() }
    }
}
