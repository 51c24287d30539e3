import Testing
@testable import ParleyWebSocket
import ParleyTestSupport

/// Frame-level rules of RFC 6455 § 5.2 / § 5.5 and the parser's incremental behaviour.
@Suite("Frame parser") struct FrameParserTests {
    private func parseError(_ bytes: [UInt8], _ configuration: WebSocketFrameParser.Configuration = .server()) -> WebSocketError? {
        do {
            _ = try WebSocketFrame.parse(bytes, configuration: configuration)
            return nil
        } catch {
            return error
        }
    }

    @Test("§ 5.2: payload lengths 0/1/125/126/127/128/65535/65536 use the minimal encoding and round-trip",
          arguments: [0, 1, 125, 126, 127, 128, 65535, 65536])
    func payloadLengths(length: Int) throws {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        for key in [nil, rfcKey] {
            let frame = WebSocketFrame(opcode: .binary, maskingKey: key, payload: payload)
            let wire = frame.serialized()
            let lengthByte = wire[1] & 0x7f
            switch length {
            case ..<126: #expect(Int(lengthByte) == length)
            case ...0xffff: #expect(lengthByte == 126); #expect(Int(wire[2]) << 8 | Int(wire[3]) == length)
            default: #expect(lengthByte == 127); #expect(wire[2..<10].reduce(0) { $0 << 8 | Int($1) } == length)
            }
            #expect(wire[1] & 0x80 == (key == nil ? 0 : 0x80))
            #expect(wire.count == frame.serializedCount)
            #expect(try WebSocketFrame.parse(wire) == frame)
            // Fed one byte at a time (large ones 1000 at a time), the same frame comes out.
            var parser = WebSocketFrameParser(configuration: .inspecting)
            var frames: [WebSocketFrame] = []
            let step = length <= 128 ? 1 : 1000
            for start in stride(from: 0, to: wire.count, by: step) {
                parser.append(wire[start..<min(start + step, wire.count)])
                while let next = try parser.nextFrame() { frames.append(next) }
            }
            #expect(frames == [frame])
            #expect(parser.isAtFrameBoundary)
            #expect(parser.streamOffset == wire.count)
        }
    }

    @Test("§ 5.3: masking is XOR with key octet i mod 4, at every alignment")
    func maskingAlignment() throws {
        for length in 0..<40 {
            let payload = (0..<length).map { UInt8($0) }
            let wire = WebSocketFrame.binary(payload, maskingKey: rfcKey).serialized()
            let masked = Array(wire.suffix(length))
            let keyBytes = rfcKey.bytes
            #expect(masked == payload.enumerated().map { $0.element ^ keyBytes[$0.offset % 4] })
            // Split at every point: unmasking must keep its phase across chunks.
            for split in 0...wire.count {
                var parser = WebSocketFrameParser(configuration: .server())
                parser.append(wire[..<split])
                var frame = try parser.nextFrame()
                parser.append(wire[split...])
                if frame == nil { frame = try parser.nextFrame() }
                #expect(frame?.payload == payload)
            }
        }
    }

    @Test("§ 5.2: a 16-bit length below 126 is not minimal")
    func nonMinimal16() {
        #expect(parseError(hex("82 7e 00 7d") + [UInt8](repeating: 0, count: 125), .client())?.kind == .nonMinimalLength)
        #expect(parseError(hex("82 7e 00 00"), .client())?.kind == .nonMinimalLength)
        #expect(parseError(hex("82 7e 00 7e") + [UInt8](repeating: 0, count: 126), .client()) == nil)
    }

    @Test("§ 5.2: a 64-bit length below 65536 is not minimal")
    func nonMinimal64() {
        #expect(parseError(hex("82 7f 00 00 00 00 00 00 ff ff"), .client())?.kind == .nonMinimalLength)
        #expect(parseError(hex("82 7f 00 00 00 00 00 00 00 05 01 02 03 04 05"), .client())?.kind == .nonMinimalLength)
        let error = parseError(hex("82 7f 00 00 00 00 00 00 00 7e"), .client())
        #expect(error?.kind == .nonMinimalLength)
        #expect(error?.offset == 2)
        #expect(error?.closeCode == .protocolError)
    }

    @Test("§ 5.2: a 64-bit length with the most significant bit set is invalid")
    func topBitLength() {
        let error = parseError(hex("82 7f 80 00 00 00 00 00 00 00"), .inspecting)
        #expect(error?.kind == .invalidLength)
        #expect(error?.offset == 2)
        #expect(parseError(hex("82 ff ff ff ff ff ff ff ff ff 01 02 03 04"), .inspecting)?.kind == .invalidLength)
    }

    @Test("2^63-1 byte length: accepted while waiting, never allocated")
    func absurdLength() throws {
        // Only the header and 10 payload bytes exist; the parser must just wait.
        var parser = WebSocketFrameParser(configuration: .inspecting)
        parser.append(hex("82 7f 7f ff ff ff ff ff ff ff") + [UInt8](repeating: 0xaa, count: 10))
        #expect(try parser.nextFrame() == nil)
        #expect(parser.bufferedByteCount == 0)
        #expect(throws: WebSocketError.self) { try parser.finish() }
        do {
            try parser.finish()
        } catch {
            #expect(error.kind == .truncated)
            #expect(error.description == "truncated input at offset 10: payload needs 9223372036854775807 bytes, 10 left")
        }
        // With a limit, it is refused from the header alone.
        #expect(parseError(hex("82 ff 7f ff ff ff ff ff ff ff"))?.kind == .frameTooLarge)
        #expect(parseError(hex("82 ff 7f ff ff ff ff ff ff ff"))?.closeCode == .messageTooBig)
    }

    @Test("Frame size limit is checked from the header, before the payload arrives")
    func frameSizeLimit() {
        let limited = WebSocketFrameParser.Configuration.server(maxFrameSize: 100)
        // 7-bit, 16-bit and 64-bit lengths over the limit, with no payload bytes given.
        #expect(parseError(hex("82 e5"), limited)?.kind == .frameTooLarge)
        #expect(parseError(hex("82 fe 01 00"), limited)?.kind == .frameTooLarge)
        #expect(parseError(hex("82 ff 00 00 00 00 00 01 00 00"), limited)?.kind == .frameTooLarge)
        // Exactly at the limit is fine; control frames are bounded by 125 regardless.
        #expect(parseError(WebSocketFrame.binary([UInt8](repeating: 1, count: 100), maskingKey: rfcKey).serialized(), limited) == nil)
        let tiny = WebSocketFrameParser.Configuration.server(maxFrameSize: 0)
        #expect(parseError(WebSocketFrame.ping([1, 2, 3], maskingKey: rfcKey).serialized(), tiny) == nil)
        #expect(parseError(WebSocketFrame.binary([1], maskingKey: rfcKey).serialized(), tiny)?.kind == .frameTooLarge)
    }

    @Test("§ 5.2: reserved bits are an error without an extension", arguments: 1...7)
    func reservedBits(rsv: Int) {
        let wire = clientFrame(.text, "Hello", rsv: UInt8(rsv))
        let error = parseError(wire)
        #expect(error?.kind == .reservedBits)
        #expect(error?.offset == 0)
        // An extension that claimed RSV1 lets exactly that bit through.
        var withExtension = WebSocketFrameParser.Configuration.server()
        withExtension.allowedReservedBits = .rsv1
        #expect((parseError(wire, withExtension) == nil) == (rsv == 4))
    }

    @Test("§ 5.2: opcodes 3-7 and B-F are reserved", arguments: [3, 4, 5, 6, 7, 11, 12, 13, 14, 15])
    func reservedOpcodes(raw: Int) {
        let op = opcode(UInt8(raw))
        #expect(op.isReserved)
        let error = parseError(clientFrame(op, "x"))
        #expect(error?.kind == .reservedOpcode)
        #expect(error?.closeCode == .protocolError)
    }

    @Test("§ 5.5: control frames must not be fragmented")
    func fragmentedControl() {
        for op in [WebSocketOpcode.close, .ping, .pong] {
            #expect(parseError(clientFrame(op, [], fin: false))?.kind == .fragmentedControlFrame)
        }
    }

    @Test("§ 5.5: control frame payloads are at most 125 bytes")
    func controlLength() {
        for op in [WebSocketOpcode.close, .ping, .pong] {
            let payload = op == .close ? [0x03, 0xe8] + [UInt8](repeating: 0x61, count: 123) : [UInt8](repeating: 0x61, count: 125)
            #expect(parseError(clientFrame(op, payload)) == nil)
            #expect(parseError(clientFrame(op, payload + [0x61]))?.kind == .controlFrameTooLong)
        }
        // A ping claiming 127 (64-bit length) is refused before its length is read.
        #expect(parseError(hex("89 ff"))?.kind == .controlFrameTooLong)
    }

    @Test("§ 5.1: a server rejects unmasked frames, a client rejects masked ones")
    func maskingByRole() {
        #expect(parseError(WebSocketFrame.text("hi").serialized(), .server())?.kind == .unmaskedFrame)
        #expect(parseError(WebSocketFrame.text("hi", maskingKey: rfcKey).serialized(), .client())?.kind == .maskedFrame)
        #expect(parseError(WebSocketFrame.text("hi").serialized(), .inspecting) == nil)
        #expect(parseError(WebSocketFrame.text("hi", maskingKey: rfcKey).serialized(), .inspecting) == nil)
    }

    @Test("Errors carry the stream offset of the bad frame, and the parser stays failed")
    func errorOffsetAndStickiness() throws {
        let good = clientFrame(.text, "Hello")
        var parser = WebSocketFrameParser(configuration: .server())
        parser.append(good + clientFrame(opcode(5), "x"))
        #expect(try parser.nextFrame() == .text("Hello", maskingKey: rfcKey))
        var first: WebSocketError?
        do { _ = try parser.nextFrame() } catch { first = error }
        #expect(first?.kind == .reservedOpcode)
        #expect(first?.offset == good.count)
        #expect(first?.description == "reserved opcode at offset 11: opcode 0x5 is reserved and no extension was negotiated")
        parser.append(good)
        do { _ = try parser.nextFrame(); Issue.record("a failed parser parsed again") } catch { #expect(error == first) }
    }

    static let samples: [[UInt8]] = [
        hex("81 05 48 65 6c 6c 6f"),
        hex("81 85 37 fa 21 3d 7f 9f 4d 51 58"),
        hex("01 03 48 65 6c"),
        hex("89 05 48 65 6c 6c 6f"),
        hex("8a 85 37 fa 21 3d 7f 9f 4d 51 58"),
        hex("82 7e 01 00") + [UInt8](repeating: 0x5a, count: 256),
        hex("82 ff 00 00 00 00 00 01 00 00 01 02 03 04") + [UInt8](repeating: 0x5a, count: 65536),
        WebSocketFrame.close(WebSocketClose(code: .goingAway, reason: "bye"), maskingKey: rfcKey).serialized(),
        hex("88 00"),
    ]

    @Test("Every truncation of every sample throws truncated")
    func truncations() {
        for sample in Self.samples {
            // Every prefix of the small ones; for the 64 KiB frame the header prefixes and a stride of the payload.
            let cuts = sample.count < 1000 ? Array(0..<sample.count) : Array(0..<20) + Array(stride(from: 20, to: sample.count, by: 997))
            for cut in cuts {
                do {
                    _ = try WebSocketFrame.parse(sample[..<cut])
                    Issue.record("prefix of \(cut) bytes parsed")
                } catch {
                    #expect(error.kind == .truncated, "cut \(cut): \(error)")
                    #expect((error.offset ?? -1) <= cut)
                }
            }
        }
    }

    @Test("Bytes after the frame are reported")
    func trailing() {
        let error = parseError(hex("81 05 48 65 6c 6c 6f 00"), .client())
        #expect(error?.kind == .trailingBytes)
        #expect(error?.offset == 7)
    }

    @Test("Any chunking of a stream yields the same frames; the buffer compacts")
    func chunkingIndependence() throws {
        var generator = SeededGenerator(seed: 42)
        var stream: [UInt8] = []
        var expected: [WebSocketFrame] = []
        for index in 0..<120 {
            let length = [0, 3, 125, 126, 300, 70000][index % 6]
            let frame = WebSocketFrame(fin: index % 3 != 0, opcode: index % 2 == 0 ? .binary : .continuation,
                                       maskingKey: WebSocketMaskingKey(rawValue: UInt32(truncatingIfNeeded: generator.next())),
                                       payload: generator.bytes(length))
            expected.append(frame)
            frame.serialize(into: &stream)
        }
        #expect(try WebSocketFrame.parseAll(stream) == expected)
        var parser = WebSocketFrameParser(configuration: .server())
        var frames: [WebSocketFrame] = []
        var index = 0
        while index < stream.count {
            let size = Int.random(in: 1...9000, using: &generator)
            let end = min(stream.count, index + size)
            parser.append(stream[index..<end])
            index = end
            while let frame = try parser.nextFrame() { frames.append(frame) }
            #expect(parser.bufferedByteCount < 16)
        }
        #expect(frames == expected)
        #expect(parser.streamOffset == stream.count)
        try parser.finish()
    }

    @Test("Random bytes: never trap or hang; whatever parses re-serializes to the same bytes")
    func randomBytes() {
        var generator = SeededGenerator(seed: 7)
        for round in 0..<10_000 {
            var input = generator.bytes(Int.random(in: 0...40, using: &generator))
            // Bias half the inputs towards plausible headers so deeper states are reached.
            if round % 2 == 0, input.count >= 2 {
                input[0] = [0x81, 0x82, 0x01, 0x00, 0x80, 0x88, 0x89, 0x8a][round / 2 % 8]
                input[1] = input[1] & 0x80 | UInt8.random(in: 0...20, using: &generator)
            }
            for configuration in [WebSocketFrameParser.Configuration.inspecting, .server(maxFrameSize: 16)] {
                do {
                    let frames = try WebSocketFrame.parseAll(input, configuration: configuration)
                    var again: [UInt8] = []
                    for frame in frames { frame.serialize(into: &again) }
                    #expect(again == input)
                } catch {
                    #expect(error.offset != nil)
                }
            }
        }
    }
}
