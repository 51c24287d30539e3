import Testing
import ParleyTestSupport
@testable import ParleyNetCore

@Suite struct DemultiplexerTests {
    let alice = SocketAddress(ipv4: 198, 51, 100, 7, port: 50000)
    let bob = SocketAddress(hostBytes: [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [2], port: 50002)!
    let stranger = SocketAddress(ipv4: 203, 0, 113, 9, port: 4444)

    @Test("RFC 7983 § 7: first-byte ranges") func classifiesByFirstByte() {
        for byte in 0...255 {
            let kind = DatagramKind.classify(firstByte: UInt8(byte))
            switch byte {
            case 0...3: #expect(kind == .stun)
            case 20...63: #expect(kind == .dtls)
            case 128...191: #expect(kind == .rtp)
            default: #expect(kind == nil, "byte \(byte)")
            }
        }
        #expect(DatagramKind.classify(UnsafeRawBufferPointer(start: nil, count: 0)) == nil)
    }

    @Test func routesBoundAddressesToTheirLegs() {
        var demux = UDPDemultiplexer<Int>()
        demux.bind(alice, to: 1)
        demux.bind(bob, to: 2)
        #expect(demux.route(firstByte: 0x80, from: alice) == .leg(1, .rtp))
        #expect(demux.route(firstByte: 0x16, from: bob) == .leg(2, .dtls))
        #expect(demux.route(firstByte: 0x00, from: alice) == .leg(1, .stun))
        // Same host, other port: a different remote.
        #expect(demux.route(firstByte: 0x80, from: alice.withPort(50001)) == .drop(.unknownSource))
        #expect(demux.counters.routed == 3)
    }

    @Test func unknownSourcesOnlyLetSTUNThrough() {
        var demux = UDPDemultiplexer<String>()
        #expect(demux.route(firstByte: 0x01, from: stranger) == .unboundSTUN)
        #expect(demux.route(firstByte: 0x80, from: stranger) == .drop(.unknownSource))
        #expect(demux.route(firstByte: 0x17, from: stranger) == .drop(.unknownSource))
        // ICE found the leg from USERNAME and binds the peer-reflexive address.
        demux.bind(stranger, to: "leg-a")
        #expect(demux.route(firstByte: 0x80, from: stranger) == .leg("leg-a", .rtp))
        #expect(demux.counters.unboundSTUN == 1)
        #expect(demux.counters.droppedUnknownSource == 2)
    }

    @Test func garbageAndEmptyDatagramsAreDroppedAndCounted() {
        var demux = UDPDemultiplexer<Int>()
        demux.bind(alice, to: 1)
        for byte: UInt8 in [4, 19, 64, 79, 127, 192, 255] {
            #expect(demux.route(firstByte: byte, from: alice) == .drop(.unknownKind))
        }
        let empty: [UInt8] = []
        #expect(empty.withUnsafeBytes { demux.route($0, from: alice) } == .drop(.empty))
        #expect(demux.counters.droppedUnknownKind == 7)
        #expect(demux.counters.droppedEmpty == 1)
        #expect(demux.counters.routed == 0)
    }

    @Test func randomDatagramsAlwaysGetARoute() {
        var generator = SeededGenerator(seed: 7983)
        var demux = UDPDemultiplexer<Int>()
        demux.bind(alice, to: 1)
        for _ in 0..<10_000 {
            let bytes = generator.bytes(generator.below(4))
            let source = generator.below(2) == 0 ? alice : stranger
            _ = bytes.withUnsafeBytes { demux.route($0, from: source) }
        }
        let c = demux.counters
        #expect(c.routed + c.unboundSTUN + c.droppedEmpty + c.droppedUnknownKind + c.droppedUnknownSource == 10_000)
    }

    @Test func bindMovesUnbindForgets() {
        var demux = UDPDemultiplexer<Int>()
        demux.bind(alice, to: 1)
        demux.bind(bob, to: 1)
        #expect(demux.addresses(of: 1) == [alice, bob])
        demux.bind(alice, to: 2)
        #expect(demux.leg(for: alice) == 2)
        #expect(demux.addresses(of: 1) == [bob])
        demux.unbind(bob)
        #expect(demux.addresses(of: 1).isEmpty)
        #expect(demux.route(firstByte: 0x80, from: bob) == .drop(.unknownSource))
        demux.bind(stranger, to: 2)
        demux.unbindAll(of: 2)
        #expect(demux.boundAddressCount == 0)
        #expect(demux.route(firstByte: 0x80, from: alice) == .drop(.unknownSource))
        demux.unbind(alice) // already gone: no effect
    }
}
