import Foundation
import ParleyNet
import Testing

@testable import ParleyServer

/// RFC 6455 conformance of the running server's `/v1/ws`, by the categories of the
/// Autobahn|Testsuite catalogue (which does not run on Python 3 here): framing and payload
/// lengths (1), ping/pong (2), reserved bits (3), opcodes (4), fragmentation (5), UTF-8
/// (6), close handling (7), limits (9), masking (RFC 6455 §5.1). The probe is
/// `RawWebSocketPeer`, which writes frames byte by byte.
///
/// A text message the server understands without a session is the protocol's `ping`
/// (allowed before `hello`, answered with `pong`), so "echo" here means: a `ping` frame
/// comes back as a `pong` with the same `re`.
///
/// By default the suite starts a `ParleyServer` in this process. With
/// `PARLEY_CONFORMANCE_ADDRESS=127.0.0.1:8080` it probes a running `parleyd` instead.
@Suite(.serialized) struct WebSocketConformanceTests {
    static let server = ConformanceServer()

    var address: SocketAddress { get throws { try Self.server.address() } }

    func peer() throws -> RawWebSocketPeer { try RawWebSocketPeer(try address) }

    /// The protocol's `ping` with request id `id`, padded with spaces to `size` bytes.
    static func protocolPing(_ id: String, size: Int = 0) -> [UInt8] {
        var text = Array(#"{"v":1,"type":"ping","id":"\#(id)"}"#.utf8)
        if text.count < size { text.insert(contentsOf: [UInt8](repeating: 0x20, count: size - text.count), at: text.count - 1) }
        return text
    }

    /// Waits for the `pong` answering `id`.
    static func expectPong(_ peer: RawWebSocketPeer, _ id: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let frame = peer.frame { $0.opcode == 0x1 }
        #expect(frame?.text.contains(#""type":"pong""#) == true, "no pong for \(id): \(String(describing: frame))", sourceLocation: sourceLocation)
        #expect(frame?.text.contains(#""re":"\#(id)""#) == true, sourceLocation: sourceLocation)
        #expect(frame?.masked == false, sourceLocation: sourceLocation)
        #expect(frame?.fin == true, sourceLocation: sourceLocation)
    }

    /// Waits for the server's close frame with `code`, answers it as a client should
    /// (§5.5.1; the server may already have dropped the TCP connection after a protocol
    /// error), then waits for the TCP connection to end.
    static func expectClose(_ peer: RawWebSocketPeer, _ code: UInt16, sourceLocation: SourceLocation = #_sourceLocation) {
        let close = peer.closeFrame()
        #expect(close?.closeCode == code, "expected close \(code), got \(String(describing: close))", sourceLocation: sourceLocation)
        try? peer.sendClose(code: code)
        #expect(peer.waitForEndOfStream(), "the server kept the TCP connection open after closing", sourceLocation: sourceLocation)
    }

    // MARK: 1 Framing

    @Test("1.1/1.2: text messages of 7-bit, 16-bit and 64-bit payload lengths", arguments: [40, 125, 126, 127, 4096, 65_535, 65_536])
    func payloadLengths(size: Int) throws {
        let peer = try peer()
        try peer.send(opcode: 0x1, Self.protocolPing("len\(size)", size: size))
        Self.expectPong(peer, "len\(size)")
    }

    @Test("1.1.1: an empty text frame is a malformed message, answered with an error; the connection stays open")
    func emptyTextFrame() throws {
        let peer = try peer()
        try peer.send(opcode: 0x1, [])
        let error = peer.frame { $0.opcode == 0x1 }
        #expect(error?.text.contains(#""code":"malformed""#) == true)
        try peer.send(opcode: 0x1, Self.protocolPing("after"))
        Self.expectPong(peer, "after")
    }

    @Test("1.2: a binary message closes with 1003 (the protocol is text only)")
    func binaryMessage() throws {
        let peer = try peer()
        try peer.send(opcode: 0x2, Self.protocolPing("bin"))
        Self.expectClose(peer, 1003)
    }

    @Test("1.x: many messages in one write come back in order")
    func pipelinedMessages() throws {
        let peer = try peer()
        var bytes: [UInt8] = []
        for index in 0..<20 { bytes += RawWebSocketPeer.frame(opcode: 0x1, Self.protocolPing("p\(index)"), fin: true, rsv: 0, masked: true) }
        try peer.writeAll(bytes)
        for index in 0..<20 { Self.expectPong(peer, "p\(index)") }
    }

    // MARK: 2 Pings and pongs

    @Test("2.1-2.3: a ping is answered with a pong carrying the same payload", arguments: [0, 5, 125])
    func pingPong(size: Int) throws {
        let peer = try peer()
        let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try peer.send(opcode: 0x9, payload)
        let pong = peer.frame { $0.opcode == 0xA }
        #expect(pong?.payload == payload)
        #expect(pong?.masked == false)
    }

    @Test("2.5: a ping with a payload over 125 bytes closes with 1002")
    func oversizedPing() throws {
        let peer = try peer()
        try peer.send(opcode: 0x9, [UInt8](repeating: 0xFE, count: 126))
        Self.expectClose(peer, 1002)
    }

    @Test("2.6/2.7: an unsolicited pong is ignored")
    func unsolicitedPong() throws {
        let peer = try peer()
        try peer.send(opcode: 0xA, Array("unsolicited".utf8))
        try peer.send(opcode: 0x1, Self.protocolPing("after-pong"))
        Self.expectPong(peer, "after-pong")
    }

    @Test("2.10: ten pings get ten pongs, in order")
    func tenPings() throws {
        let peer = try peer()
        for index in 0..<10 { try peer.send(opcode: 0x9, Array("ping-\(index)".utf8)) }
        for index in 0..<10 {
            let pong = peer.frame { $0.opcode == 0xA }
            #expect(pong?.text == "ping-\(index)")
        }
    }

    // MARK: 3 Reserved bits

    @Test("3.1-3.7: a frame with RSV1, RSV2 or RSV3 set (no extension negotiated) closes with 1002",
          arguments: [(UInt8(0x40), UInt8(0x1)), (0x20, 0x1), (0x10, 0x1), (0x60, 0x1), (0x40, 0x9), (0x70, 0x1)])
    func reservedBits(rsv: UInt8, opcode: UInt8) throws {
        let peer = try peer()
        try peer.send(opcode: opcode, opcode == 0x1 ? Self.protocolPing("rsv") : [], rsv: rsv)
        Self.expectClose(peer, 1002)
    }

    // MARK: 4 Opcodes

    @Test("4.1/4.2: reserved data (3-7) and control (11-15) opcodes close with 1002", arguments: [3, 4, 5, 6, 7, 11, 12, 13, 14, 15] as [UInt8])
    func reservedOpcodes(opcode: UInt8) throws {
        let peer = try peer()
        try peer.send(opcode: opcode, Array("reserved".utf8))
        Self.expectClose(peer, 1002)
    }

    // MARK: 5 Fragmentation

    @Test("5.3-5.5: a message in 1-byte to 10-byte fragments is reassembled", arguments: [1, 3, 10])
    func fragmentedMessage(fragmentSize: Int) throws {
        let peer = try peer()
        let message = Self.protocolPing("frag\(fragmentSize)")
        var offset = 0
        var first = true
        while offset < message.count {
            let end = min(offset + fragmentSize, message.count)
            try peer.send(opcode: first ? 0x1 : 0x0, Array(message[offset..<end]), fin: end == message.count)
            first = false
            offset = end
        }
        Self.expectPong(peer, "frag\(fragmentSize)")
    }

    @Test("5.6-5.8: a ping between the fragments of a message is answered at once; the message still arrives")
    func controlFrameBetweenFragments() throws {
        let peer = try peer()
        let message = Self.protocolPing("interleaved")
        let half = message.count / 2
        try peer.send(opcode: 0x1, Array(message[..<half]), fin: false)
        try peer.send(opcode: 0x9, Array("mid".utf8))
        let pong = peer.frame { $0.opcode == 0xA }
        #expect(pong?.text == "mid")
        try peer.send(opcode: 0x0, Array(message[half...]), fin: true)
        Self.expectPong(peer, "interleaved")
    }

    @Test("5.1/5.2: a fragmented ping closes with 1002")
    func fragmentedControlFrame() throws {
        let peer = try peer()
        try peer.send(opcode: 0x9, Array("frag".utf8), fin: false)
        Self.expectClose(peer, 1002)
    }

    @Test("5.9-5.12: a continuation frame with no message started closes with 1002")
    func continuationWithoutStart() throws {
        let peer = try peer()
        try peer.send(opcode: 0x0, Self.protocolPing("cont"), fin: true)
        Self.expectClose(peer, 1002)
    }

    @Test("5.17-5.20: a new text frame while a fragmented message is open closes with 1002")
    func newMessageInsideFragmentedOne() throws {
        let peer = try peer()
        let message = Self.protocolPing("nested")
        try peer.send(opcode: 0x1, Array(message[..<5]), fin: false)
        try peer.send(opcode: 0x1, message, fin: true)
        Self.expectClose(peer, 1002)
    }

    // MARK: 6 UTF-8

    @Test("6.2-6.4: valid multi-byte UTF-8 (2, 3 and 4 bytes), also split inside a character across fragments")
    func validUTF8() throws {
        let peer = try peer()
        let message = Array(#"{"v":1,"type":"ping","id":"utf","note":"κόσμε – € 𝄞"}"#.utf8)
        try peer.send(opcode: 0x1, message)
        Self.expectPong(peer, "utf")
        // Split at every byte: each character is cut somewhere.
        let again = Array(#"{"v":1,"type":"ping","id":"utf2","note":"𝄞€κ"}"#.utf8)
        for (index, byte) in again.enumerated() {
            try peer.send(opcode: index == 0 ? 0x1 : 0x0, [byte], fin: index == again.count - 1)
        }
        Self.expectPong(peer, "utf2")
    }

    @Test("6.3-6.21: invalid UTF-8 in a text message closes with 1007",
          arguments: [[0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xCE, 0x41], [0xFF], [0xE0, 0x80, 0xAF]] as [[UInt8]])
    func invalidUTF8(sequence: [UInt8]) throws {
        let peer = try peer()
        let message = Array(#"{"v":1,"type":"ping","id":"bad","note":""#.utf8) + sequence + Array(#""}"#.utf8)
        try peer.send(opcode: 0x1, message)
        Self.expectClose(peer, 1007)
    }

    @Test("6.4.x: invalid UTF-8 split across fragments fails fast, before the message ends")
    func invalidUTF8FailsFastAcrossFragments() throws {
        let peer = try peer()
        // 0xF4 0x90 starts a code point above U+10FFFF: no continuation can make it valid.
        try peer.send(opcode: 0x1, Array(#"{"v":1,"type":"ping","id":"ff","note":""#.utf8) + [0xF4], fin: false)
        try peer.send(opcode: 0x0, [0x90], fin: false)
        // The final fragment is never sent: the server must close on what it has.
        Self.expectClose(peer, 1007)
    }

    // MARK: 7 Close handling

    @Test("7.1.1: a close with 1000 is answered with a close, then the server ends the TCP connection")
    func normalClose() throws {
        let peer = try peer()
        try peer.sendClose(code: 1000, reason: Array("bye".utf8))
        Self.expectClose(peer, 1000)
    }

    @Test("7.3.1: a close without a payload is answered with a close")
    func emptyClose() throws {
        let peer = try peer()
        try peer.sendClose(code: nil)
        let close = peer.closeFrame()
        #expect(close != nil)
        #expect(close?.closeCode == nil || close?.closeCode == 1000)
        #expect(peer.waitForEndOfStream())
    }

    @Test("7.1.2-7.1.6: after a close, further frames are ignored")
    func framesAfterClose() throws {
        let peer = try peer()
        try peer.sendClose(code: 1000)
        try? peer.send(opcode: 0x1, Self.protocolPing("late"))
        let frames = (0..<3).compactMap { _ in peer.nextFrame(timeout: .milliseconds(500)) }
        #expect(frames.contains { $0.opcode == 0x8 })
        #expect(!frames.contains { $0.opcode == 0x1 })
    }

    @Test("7.1.x: a client that never answers the server's close frame is dropped within the 10 s handshake timeout")
    func silentClientAfterServerClose() throws {
        let peer = try peer()
        try peer.send(opcode: 0x2, [1, 2, 3])
        #expect(peer.closeFrame()?.closeCode == 1003)
        #expect(peer.waitForEndOfStream(timeout: .seconds(15)))
    }

    @Test("7.3.2: a close payload of one byte closes with 1002")
    func oneByteClose() throws {
        let peer = try peer()
        try peer.send(opcode: 0x8, [0x03])
        Self.expectClose(peer, 1002)
    }

    @Test("7.7: valid close codes are accepted", arguments: [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999] as [UInt16])
    func validCloseCodes(code: UInt16) throws {
        let peer = try peer()
        try peer.sendClose(code: code)
        let close = peer.closeFrame()
        #expect(close != nil)
        #expect(close?.closeCode == code || close?.closeCode == 1000, "close \(code) answered with \(String(describing: close))")
        #expect(peer.waitForEndOfStream())
    }

    @Test("7.9: invalid close codes close with 1002", arguments: [0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65_535] as [UInt16])
    func invalidCloseCodes(code: UInt16) throws {
        let peer = try peer()
        try peer.sendClose(code: code)
        Self.expectClose(peer, 1002)
    }

    @Test("7.5.1: a close reason that is not UTF-8 closes with 1007")
    func invalidCloseReason() throws {
        let peer = try peer()
        try peer.sendClose(code: 1000, reason: [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xED, 0xA0, 0x80])
        Self.expectClose(peer, 1007)
    }

    // MARK: 9 Limits

    @Test("9.1: a message over the 64 KiB limit closes with 1009, in one frame or in fragments")
    func overTheLimit() throws {
        let single = try peer()
        try single.send(opcode: 0x1, Self.protocolPing("big", size: 65_537))
        Self.expectClose(single, 1009)

        let fragmented = try peer()
        let message = Self.protocolPing("bigfrag", size: 70_000)
        try fragmented.send(opcode: 0x1, Array(message[..<40_000]), fin: false)
        try? fragmented.send(opcode: 0x0, Array(message[40_000...]), fin: true)
        Self.expectClose(fragmented, 1009)
    }

    @Test("9.x: a flood of messages is closed with the protocol's rate-limit code 4005; another client is still served")
    func flood() throws {
        let flooder = try peer()
        let calm = try peer()
        var bytes: [UInt8] = []
        for index in 0..<400 { bytes += RawWebSocketPeer.frame(opcode: 0x1, Self.protocolPing("f\(index)"), fin: true, rsv: 0, masked: true) }
        try? flooder.writeAll(bytes)
        let close = flooder.closeFrame(timeout: .seconds(10))
        #expect(close?.closeCode == 4005, "flood answered with \(String(describing: close))")
        try calm.send(opcode: 0x1, Self.protocolPing("calm"))
        Self.expectPong(calm, "calm")
    }

    // MARK: Masking and the handshake

    @Test("RFC 6455 §5.1: an unmasked client frame closes with 1002")
    func unmaskedClientFrame() throws {
        let peer = try peer()
        try peer.send(opcode: 0x1, Self.protocolPing("unmasked"), masked: false)
        Self.expectClose(peer, 1002)
    }

    @Test("An upgrade without the parley.v1 subprotocol is refused with 426 and a JSON body naming version 1")
    func missingSubprotocol() throws {
        let error = #expect(throws: RawWebSocketPeer.Failure.self) { try RawWebSocketPeer(try address, subprotocol: nil) }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("426"))
        #expect(text.contains(#""code":"unsupported_version""#))
        #expect(text.contains(#""supported":[1]"#))
    }
}

/// The server the conformance suite probes: a `ParleyServer` started once for the suite in
/// a temporary data directory, or the address in `PARLEY_CONFORMANCE_ADDRESS`.
final class ConformanceServer: @unchecked Sendable {
    private let lock = NSLock()
    private var started: Result<(ParleyServer?, SocketAddress), any Error>?

    func address() throws -> SocketAddress {
        lock.lock()
        defer { lock.unlock() }
        if started == nil {
            started = Result {
                if let text = ProcessInfo.processInfo.environment["PARLEY_CONFORMANCE_ADDRESS"] {
                    return (nil, try SocketAddress(parsing: text))
                }
                let directory = NSTemporaryDirectory() + "parley-conformance-\(UUID().uuidString)"
                var configuration = ServerConfiguration(dataDirectory: directory, listenAddresses: [.ipv4Loopback(port: 0)])
                configuration.mediaPorts = 47_000...47_099
                let server = try ParleyServer(configuration: configuration, stores: .sqlite(dataDirectory: configuration.dataDirectory), log: ServerLog(level: .error, sink: { _ in }))
                try server.start()
                guard let address = server.localAddresses.first else { throw RawWebSocketPeer.Failure.handshake("server has no address") }
                return (server, address)
            }
        }
        return try started!.get().1
    }
}
