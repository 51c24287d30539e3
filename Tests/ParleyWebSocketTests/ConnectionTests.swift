import Testing
@testable import ParleyWebSocket
import ParleyTestSupport

/// Connection behaviour, organised like the Autobahn|Testsuite case catalogue. Every
/// script is run whole, one byte at a time and in 3-byte chunks (`script`), which must
/// all give the same events.
@Suite("Connection (Autobahn catalogue)") struct ConnectionTests {
    // MARK: 1 Framing

    @Test("1.1 / 1.2: text and binary messages of 0, 125, 126, 127, 128, 65535, 65536 bytes",
          arguments: [0, 125, 126, 127, 128, 65535, 65536])
    func framingLengths(length: Int) {
        let text = String(repeating: "*", count: length)
        let binary = [UInt8](repeating: 0xfe, count: length)
        let stream = clientFrame(.text, text) + clientFrame(.binary, binary)
        for chunk in length <= 128 ? [0, 1, 997] : [0, 13, 997] {
            #expect(run(stream, chunkSize: chunk) == [.text(text), .binary(binary)])
        }
    }

    @Test("1.1.8 / 1.2.8: a 65536-byte message delivered in 997-byte chops")
    func chopped() {
        let text = String(repeating: "a", count: 65536)
        #expect(run(clientFrame(.text, text), chunkSize: 997) == [.text(text)])
    }

    @Test("Client role: unmasked server frames are accepted, masked ones refused")
    func clientRole() {
        #expect(script(WebSocketFrame.text("hi").serialized(), role: .client) == ["text:hi"])
        #expect(script(clientFrame(.text, "hi"), role: .client) == ["fail:1002:maskedFrame"])
        #expect(script(WebSocketFrame.text("hi").serialized(), role: .server) == ["fail:1002:unmaskedFrame"])
    }

    // MARK: 2 Pings / Pongs

    @Test("2.1-2.4: pings with empty, text, binary and 125-byte payloads are answered")
    func pings() {
        #expect(script(clientFrame(.ping)) == ["sendPong:"])
        #expect(script(clientFrame(.ping, "Hello, world!")) == ["sendPong:48656c6c6f2c20776f726c6421"])
        #expect(script(clientFrame(.ping, [0x00, 0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0x00, 0xff])) == ["sendPong:00fffefdfcfb00ff"])
        let big = [UInt8](repeating: 0xfe, count: 125)
        #expect(run(clientFrame(.ping, big), chunkSize: 1) == [.sendPong(big)])
    }

    @Test("2.5: a ping with a 126-byte payload fails the connection")
    func pingTooLong() {
        #expect(script(clientFrame(.ping, [UInt8](repeating: 0xfe, count: 126))) == ["fail:1002:controlFrameTooLong"])
    }

    @Test("2.7-2.9: unsolicited pongs are delivered; a pong then a ping")
    func pongs() {
        #expect(script(clientFrame(.pong)) == ["pong:"])
        #expect(script(clientFrame(.pong, "unsolicited pong payload")) == ["pong:756e736f6c69636974656420706f6e67207061796c6f6164"])
        #expect(script(clientFrame(.pong, "a") + clientFrame(.ping, "b")) == ["pong:61", "sendPong:62"])
    }

    @Test("2.10 / 2.11: ten pings in a row, whole and chopped")
    func tenPings() {
        var stream: [UInt8] = []
        for index in 0..<10 { stream += clientFrame(.ping, "payload-\(index)") }
        let events = run(stream, chunkSize: 1)
        #expect(events == (0..<10).map { .sendPong(Array("payload-\($0)".utf8)) })
        #expect(run(stream) == events)
    }

    // MARK: 3 Reserved bits

    @Test("3.1-3.7: any reserved bit fails the connection, after what came before was delivered")
    func reservedBits() {
        #expect(script(clientFrame(.text, "Hello", rsv: 4)) == ["fail:1002:reservedBits"])
        #expect(script(clientFrame(.text, "Hello") + clientFrame(.text, "Hello", rsv: 2) + clientFrame(.ping))
                == ["text:Hello", "fail:1002:reservedBits"])
        #expect(script(clientFrame(.text, "Hello") + clientFrame(.text, "Hello", rsv: 3)) == ["text:Hello", "fail:1002:reservedBits"])
        #expect(script(clientFrame(.ping, "", rsv: 1)) == ["fail:1002:reservedBits"])
        #expect(script(clientFrame(.binary, [0xff], rsv: 5)) == ["fail:1002:reservedBits"])
        #expect(script(clientFrame(.ping, "", rsv: 6)) == ["fail:1002:reservedBits"])
        #expect(script(clientFrame(.close, [0x03, 0xe8], rsv: 7)) == ["fail:1002:reservedBits"])
    }

    // MARK: 4 Opcodes

    @Test("4.1.1-4.1.5 / 4.2.1-4.2.5: reserved opcodes fail the connection, also after a message and before a ping",
          arguments: [3, 4, 5, 6, 7, 11, 12, 13, 14, 15])
    func reservedOpcodes(raw: Int) {
        #expect(script(clientFrame(opcode(UInt8(raw)))) == ["fail:1002:reservedOpcode"])
        #expect(script(clientFrame(.text, "Hello") + clientFrame(opcode(UInt8(raw)), "reserved") + clientFrame(.ping))
                == ["text:Hello", "fail:1002:reservedOpcode"])
    }

    // MARK: 5 Fragmentation

    @Test("5.1 / 5.2: fragmented ping and pong fail the connection")
    func fragmentedControl() {
        #expect(script(clientFrame(.ping, "frag1", fin: false) + clientFrame(.continuation, "frag2")) == ["fail:1002:fragmentedControlFrame"])
        #expect(script(clientFrame(.pong, "frag1", fin: false) + clientFrame(.continuation, "frag2")) == ["fail:1002:fragmentedControlFrame"])
    }

    @Test("5.3-5.5: a text message in two fragments, whole and chopped")
    func twoFragments() {
        #expect(script(clientFrame(.text, "frag1", fin: false) + clientFrame(.continuation, "frag2")) == ["text:frag1frag2"])
    }

    @Test("5.6-5.8: a ping between two fragments is answered first")
    func pingBetweenFragments() {
        #expect(script(clientFrame(.text, "fragment1", fin: false) + clientFrame(.ping, "ping") + clientFrame(.continuation, "fragment2"))
                == ["sendPong:70696e67", "text:fragment1fragment2"])
    }

    @Test("5.9-5.14: continuation frames without a message fail the connection")
    func orphanContinuation() {
        for fin in [true, false] {
            #expect(script(clientFrame(.continuation, "non-continuation payload", fin: fin) + clientFrame(.text, "Hello"))
                    == ["fail:1002:unexpectedContinuation"])
        }
        // 5.13 / 5.14 style: a message, then an orphan continuation.
        #expect(script(clientFrame(.text, "a") + clientFrame(.continuation, "b")) == ["text:a", "fail:1002:unexpectedContinuation"])
    }

    @Test("5.15-5.18: a new data frame inside a fragmented message fails the connection")
    func newMessageInsideFragmented() {
        #expect(script(clientFrame(.text, "fragment1", fin: false) + clientFrame(.continuation, "fragment2")
                       + clientFrame(.continuation, "fragment3", fin: false) + clientFrame(.text, "fragment4"))
                == ["text:fragment1fragment2", "fail:1002:unexpectedContinuation"])
        #expect(script(clientFrame(.text, "fragment1", fin: false) + clientFrame(.text, "fragment2"))
                == ["fail:1002:expectedContinuation"])
        #expect(script(clientFrame(.binary, [1], fin: false) + clientFrame(.text, "x", fin: false))
                == ["fail:1002:expectedContinuation"])
    }

    @Test("5.19 / 5.20: a message in five fragments with pings interleaved")
    func fiveFragmentsWithPings() {
        let stream = clientFrame(.text, "fragment1", fin: false) + clientFrame(.continuation, "fragment2", fin: false)
            + clientFrame(.ping, "pongme 1!") + clientFrame(.continuation, "fragment3", fin: false)
            + clientFrame(.continuation, "fragment4", fin: false) + clientFrame(.ping, "pongme 2!")
            + clientFrame(.continuation, "fragment5")
        #expect(script(stream) == ["sendPong:706f6e676d65203121", "sendPong:706f6e676d65203221",
                                   "text:fragment1fragment2fragment3fragment4fragment5"])
    }

    @Test("Empty fragments and a close between fragments")
    func emptyFragments() {
        #expect(script(clientFrame(.text, "", fin: false) + clientFrame(.continuation, "", fin: false) + clientFrame(.continuation, ""))
                == ["text:"])
        #expect(script(clientFrame(.binary, [], fin: false) + clientFrame(.continuation, [7])) == ["binary:07"])
        // Closing mid-message is allowed; the half message is dropped.
        #expect(script(clientFrame(.text, "half", fin: false) + clientFrame(.close, [0x03, 0xe8]))
                == ["sendClose:1000", "closed:1000:"])
    }

    // MARK: 6 UTF-8 handling

    @Test("6.1: empty text messages, including empty fragments")
    func emptyText() {
        #expect(script(clientFrame(.text, "")) == ["text:"])
    }

    @Test("6.2 / 6.5-6.7: valid multi-byte UTF-8, split at every byte between two fragments")
    func validSplits() {
        let text = "Hello-µ@ßöäüàá-UTF-8!! κόσμε \u{10FFFF} \u{FFFD} \u{E000}"
        let bytes = Array(text.utf8)
        for split in 0...bytes.count {
            let stream = clientFrame(.text, Array(bytes[..<split]), fin: false) + clientFrame(.continuation, Array(bytes[split...]))
            #expect(run(stream) == [.text(text)])
            #expect(run(stream, chunkSize: 1) == [.text(text)])
        }
        // 6.2.4: one fragment per byte.
        var stream = clientFrame(.text, [bytes[0]], fin: false)
        for byte in bytes.dropFirst().dropLast() { stream += clientFrame(.continuation, [byte], fin: false) }
        stream += clientFrame(.continuation, [bytes[bytes.count - 1]])
        #expect(run(stream) == [.text(text)])
    }

    static let invalidUTF8: [(String, String)] = [
        ("6.3.1 invalid sequence in the middle", "cebae1bdb9cf83cebcceb5eda080656469746564"),
        ("6.6.1 lone continuation", "ce"),
        ("6.8.1 5-byte sequence", "f888808080"),
        ("6.8.2 6-byte sequence", "fc8480808080"),
        ("6.9.1 first above U+10FFFF", "f4908080"),
        ("6.10.1 lone continuation 80", "80"),
        ("6.10.2 lone continuation bf", "bf"),
        ("6.11 FE and FF", "fe"),
        ("6.11 FF", "ff"),
        ("6.12.1 2-byte start then space", "c020"),
        ("6.14.1 incomplete 3-byte at end", "e080"),
        ("6.14.2 incomplete 4-byte at end", "f08080"),
        ("6.17.1 overlong slash 2 bytes", "c0af"),
        ("6.17.2 overlong slash 3 bytes", "e080af"),
        ("6.17.3 overlong slash 4 bytes", "f08080af"),
        ("6.18.1 maximal overlong 2 bytes", "c1bf"),
        ("6.18.2 maximal overlong 3 bytes", "e09fbf"),
        ("6.18.3 maximal overlong 4 bytes", "f08fbfbf"),
        ("6.19.1 overlong NUL", "c080"),
        ("6.20.1 surrogate D800", "eda080"),
        ("6.20.7 surrogate DFFF", "edbfbf"),
        ("6.21.1 surrogate pair", "eda080edb080"),
        ("above U+10FFFF via F5", "f5808080"),
    ]

    @Test("6.3-6.21: invalid UTF-8 fails the connection with 1007, whole and split at every byte")
    func invalidSequences() {
        for (name, hexText) in Self.invalidUTF8 {
            let bytes = Array("ok ".utf8) + hex(hexText)
            #expect(script(clientFrame(.text, bytes)) == ["fail:1007:invalidUTF8"], "\(name)")
            for split in 0...bytes.count {
                let stream = clientFrame(.text, Array(bytes[..<split]), fin: false) + clientFrame(.continuation, Array(bytes[split...]))
                #expect(describe(run(stream)) == ["fail:1007:invalidUTF8"], "\(name) split at \(split)")
            }
        }
    }

    @Test("6.4.1 / 6.4.2: fail fast, before the fragment that would finish the message")
    func failFastAcrossFragments() {
        // 6.4.1: valid first fragment, the second holds the bad byte, the third never needed.
        let first = clientFrame(.text, "κόσμε", fin: false)
        let second = clientFrame(.continuation, hex("f4 90 80 80"), fin: false)
        let connection = Peer(configuration: .init(role: .server))
        #expect(connection.receive(first) == [])
        #expect(describe(connection.receive(second)) == ["fail:1007:invalidUTF8"])
        #expect(connection.state == .failed)
        #expect(connection.receive(clientFrame(.continuation, "edited")) == [])
    }

    @Test("6.4.3 / 6.4.4: fail fast inside one frame whose payload is still arriving")
    func failFastWithinFrame() {
        let frame = clientFrame(.text, Array("κόσμε".utf8) + hex("f4 90 80 80") + Array("edited".utf8))
        let connection = Peer(configuration: .init(role: .server))
        let badIndex = 6 + "κόσμε".utf8.count + 1 // header + key, valid text, then F4 is fine and 90 is bad
        #expect(connection.receive(frame[..<(badIndex)]) == [])
        let events = connection.receive(frame[badIndex..<(badIndex + 1)])
        guard case .failConnection(let error)? = events.first else { Issue.record("no failure: \(events)"); return }
        #expect(error.kind == .invalidUTF8)
        #expect(error.offset == badIndex)
    }

    @Test("Invalid UTF-8 in a binary message is fine")
    func binaryIsNotValidated() {
        #expect(script(clientFrame(.binary, hex("ff fe c0 80"))) == ["binary:fffec080"])
    }

    // MARK: 7 Close handling

    @Test("7.1.1: a normal close is echoed and ends the connection")
    func closeNormally() {
        let connection = Peer(configuration: .init(role: .server))
        #expect(connection.receive(clientFrame(.text, "Hello")) == [.text("Hello")])
        #expect(connection.receive(clientFrame(.close, [0x03, 0xe8])) ==
                [.sendClose(WebSocketClose(code: .normalClosure)), .closed(WebSocketClose(code: .normalClosure))])
        #expect(connection.state == .closed)
        #expect(!connection.canSendMessages)
        #expect(!connection.beginClosing())
    }

    @Test("7.1.2-7.1.5: after a close, further close, ping, text and fragments are ignored")
    func afterClose() {
        let close = clientFrame(.close, [0x03, 0xe8])
        for after in [close, clientFrame(.ping, "ping"), clientFrame(.text, "Hello"), clientFrame(.text, "frag", fin: false)] {
            #expect(script(close + after) == ["sendClose:1000", "closed:1000:"])
        }
        let connection = Peer(configuration: .init(role: .server))
        _ = connection.receive(close)
        #expect(connection.receive(clientFrame(.text, "late")) == [])
        #expect(connection.receiveEndOfStream() == [])
    }

    @Test("7.1.6: a large message followed by close in one read: both delivered in order")
    func largeThenClose() {
        let text = String(repeating: "BAsd7&jh23", count: 26214)
        let events = run(clientFrame(.text, text) + clientFrame(.ping, "ping") + clientFrame(.close, [0x03, 0xe8]))
        #expect(events == [.text(text), .sendPong(Array("ping".utf8)),
                           .sendClose(WebSocketClose(code: .normalClosure)), .closed(WebSocketClose(code: .normalClosure))])
    }

    @Test("7.3.1-7.3.6: close payload lengths 0, 1, 2, with reason, 123-byte and 124-byte reasons")
    func closePayloads() {
        #expect(script(clientFrame(.close)) == ["sendClose:none", "closed:none:"])
        #expect(script(clientFrame(.close, [0x03])) == ["fail:1002:invalidClosePayload"])
        #expect(script(clientFrame(.close, [0x03, 0xe8])) == ["sendClose:1000", "closed:1000:"])
        #expect(script(clientFrame(.close, [0x03, 0xe8] + Array("Hello World!".utf8))) == ["sendClose:1000", "closed:1000:Hello World!"])
        let reason123 = String(repeating: "*", count: 123)
        #expect(script(clientFrame(.close, [0x03, 0xe8] + Array(reason123.utf8))) == ["sendClose:1000", "closed:1000:\(reason123)"])
        #expect(script(clientFrame(.close, [0x03, 0xe8] + [UInt8](repeating: 0x2a, count: 124))) == ["fail:1002:controlFrameTooLong"])
    }

    @Test("7.5.1: a close reason that is not UTF-8 fails with 1007")
    func invalidCloseReason() {
        #expect(script(clientFrame(.close, [0x03, 0xe8] + hex("ce ba e1 bd b9 cf 83 ce bc ce b5 ed a0 80 65 64 69 74 65 64")))
                == ["fail:1007:invalidCloseReason"])
        #expect(script(clientFrame(.close, [0x03, 0xe8, 0xce])) == ["fail:1007:invalidCloseReason"])
    }

    @Test("7.7.1-7.7.13: valid close codes are accepted and echoed",
          arguments: [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999])
    func validCloseCodes(code: Int) {
        let payload = [UInt8(code >> 8), UInt8(code & 0xff)]
        #expect(script(clientFrame(.close, payload)) == ["sendClose:\(code)", "closed:\(code):"])
    }

    @Test("7.9.1-7.9.13: invalid close codes fail with 1002",
          arguments: [0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535])
    func invalidCloseCodes(code: Int) {
        let payload = [UInt8(code >> 8), UInt8(code & 0xff)]
        #expect(script(clientFrame(.close, payload)) == ["fail:1002:invalidCloseCode"])
        #expect(!WebSocketCloseCode(rawValue: UInt16(code)).isAllowedOnWire)
    }

    @Test("Close started by this end: data still delivered, the peer's close completes it without an echo")
    func closeInitiatedLocally() {
        let connection = Peer(configuration: .init(role: .client))
        #expect(connection.beginClosing())
        #expect(connection.state == .closing)
        #expect(!connection.canSendMessages)
        #expect(!connection.beginClosing())
        #expect(connection.receive(WebSocketFrame.text("late").serialized()) == [.text("late")])
        #expect(connection.receive(WebSocketFrame.close(WebSocketClose(code: .goingAway, reason: "bye")).serialized())
                == [.closed(WebSocketClose(code: .goingAway, reason: "bye"))])
        #expect(connection.state == .closed)
    }

    @Test("End of stream before the close handshake is an abnormal closure (1006)")
    func endOfStream() {
        let connection = Peer(configuration: .init(role: .server))
        _ = connection.receive(clientFrame(.text, "partial", fin: false))
        #expect(connection.receiveEndOfStream() == [.closed(WebSocketClose(code: .abnormalClosure))])
        #expect(connection.state == .closed)
        #expect(connection.receiveEndOfStream() == [])
    }

    @Test("The application can fail the connection with its own code (1008 policy)")
    func applicationFailure() {
        let connection = Peer(configuration: .init(role: .server))
        #expect(connection.fail())
        #expect(connection.state == .failed)
        #expect(!connection.fail())
        #expect(connection.receive(clientFrame(.text, "x")) == [])
        #expect(WebSocketFrame.close(WebSocketClose(code: .policyViolation, reason: "bad token")).serialized()
                == [0x88, 0x0b, 0x03, 0xf0] + Array("bad token".utf8))
    }

    @Test("Close reasons are cut to 123 bytes at a character boundary")
    func longReason() throws {
        let close = WebSocketClose(code: .normalClosure, reason: String(repeating: "é", count: 100))
        let payload = close.payload
        #expect(payload.count == 2 + 122)
        let parsed = try WebSocketClose.parse(payload: payload)
        #expect(parsed.reason == String(repeating: "é", count: 61))
        #expect(WebSocketClose(code: nil, reason: "ignored").payload == [])
    }

    // MARK: 9 Limits

    @Test("Frame and message size limits fail with 1009 from the header, before the payload")
    func limits() {
        // A message too large in one frame: refused from its header alone.
        let connection = Peer(configuration: .init(role: .server, maxFrameSize: 1 << 20, maxMessageSize: 1000))
        let header = Array(clientFrame(.binary, [UInt8](repeating: 0, count: 1001)).prefix(8))
        #expect(describe(connection.receive(header)) == ["fail:1009:messageTooLarge"])
        // Fragments adding up past the limit.
        #expect(script(clientFrame(.text, String(repeating: "a", count: 600), fin: false) + clientFrame(.continuation, String(repeating: "b", count: 401)),
                       maxMessageSize: 1000) == ["fail:1009:messageTooLarge"])
        #expect(script(clientFrame(.text, String(repeating: "a", count: 600), fin: false) + clientFrame(.continuation, String(repeating: "b", count: 400)),
                       maxMessageSize: 1000) == ["text:" + String(repeating: "a", count: 600) + String(repeating: "b", count: 400)])
        // Frame limit.
        #expect(describe(run(clientFrame(.binary, [UInt8](repeating: 0, count: 101)), maxFrameSize: 100)) == ["fail:1009:frameTooLarge"])
        // An absurd 2^63-1 length from a client: refused at once, nothing allocated.
        #expect(describe(run(hex("82 ff 7f ff ff ff ff ff ff ff 37 fa 21 3d"))) == ["fail:1009:frameTooLarge"])
        // Pings still work while a message is at its limit.
        #expect(script(clientFrame(.text, String(repeating: "a", count: 1000), fin: false) + clientFrame(.ping) + clientFrame(.continuation),
                       maxMessageSize: 1000) == ["sendPong:", "text:" + String(repeating: "a", count: 1000)])
    }

    @Test("The failure event carries what to send: code and a short reason")
    func failureClose() throws {
        let events = run(clientFrame(opcode(3)))
        guard case .failConnection(let error)? = events.first else { Issue.record("expected a failure"); return }
        #expect(error.close == WebSocketClose(code: .protocolError, reason: "reserved opcode"))
        #expect(WebSocketFrame.close(error.close).serialized() == [0x88, 0x11, 0x03, 0xea] + Array("reserved opcode".utf8))
    }

    // MARK: Hostile input

    @Test("Random byte streams: never trap or hang; chunking never changes the events")
    func randomStreams() {
        var generator = SeededGenerator(seed: 99)
        for round in 0..<3000 {
            var stream: [UInt8] = []
            // Mix valid frames with random bytes so later states get exercised.
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                switch Int.random(in: 0...3, using: &generator) {
                case 0: stream += clientFrame(.text, generator.bytes(Int.random(in: 0...8, using: &generator)), fin: Bool.random(using: &generator))
                case 1: stream += clientFrame(.continuation, generator.bytes(Int.random(in: 0...8, using: &generator)), fin: Bool.random(using: &generator))
                case 2: stream += clientFrame(.close, generator.bytes(Int.random(in: 0...4, using: &generator)))
                default: stream += generator.bytes(Int.random(in: 0...12, using: &generator))
                }
            }
            let role: WebSocketRole = round % 4 == 0 ? .client : .server
            let whole = run(stream, role: role)
            #expect(run(stream, role: role, chunkSize: 1) == whole)
            #expect(run(stream, role: role, chunkSize: 5) == whole)
        }
    }

    @Test("Every truncation of a valid conversation gives a prefix of its events, never a failure")
    func truncatedConversation() {
        let stream = clientFrame(.text, "Hel", fin: false) + clientFrame(.ping, "p") + clientFrame(.continuation, "lo ☃")
            + clientFrame(.binary, [1, 2, 3]) + clientFrame(.close, [0x03, 0xe8, 0x6f, 0x6b])
        let all = run(stream)
        #expect(describe(all) == ["sendPong:70", "text:Hello ☃", "binary:010203", "sendClose:1000", "closed:1000:ok"])
        for cut in 0..<stream.count {
            let events = run(Array(stream[..<cut]))
            #expect(Array(all.prefix(events.count)) == events, "cut \(cut)")
        }
    }
}
