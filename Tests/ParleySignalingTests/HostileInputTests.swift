import ParleySignaling
import Testing
import ParleyTestSupport

/// Input from an attacker: every path must end in a `SignalingError` (or a valid
/// message), never a trap, a hang or a huge allocation.
@Suite("Hostile input")
struct HostileInputTests {
    static func error(_ bytes: [UInt8], maxFrameSize: Int = SignalingLimits.defaultMaxFrameSize) -> SignalingError? {
        signalingError { () throws(SignalingError) in try SignalingCodec.decode(bytes, maxFrameSize: maxFrameSize) }
    }

    /// The error reply for `error` must itself be a valid frame (the server sends it as it
    /// is); returns the problem if it is not. Loops collect these and expect once, since
    /// the #expect macro costs more than a decode in debug builds.
    static func replyProblem(_ decodeError: SignalingError?) -> String? {
        guard let decodeError else { return nil }
        do {
            try SignalingCodec.validate(SignalingCodec.errorReply(for: decodeError))
            return nil
        } catch {
            return "reply to \(decodeError) is invalid: \(error)"
        }
    }

    @Test("every truncation of every sample throws")
    func truncations() {
        for message in Samples.messages {
            let frame = SignalingCodec.encode(message)
            let accepted = (0..<frame.count).filter { Self.error(Array(frame[0..<$0])) == nil }
            #expect(accepted.isEmpty, "prefixes of \(accepted) bytes of \(message.type.rawValue) decoded")
        }
    }

    @Test("empty input and whitespace only")
    func empty() {
        #expect(Self.error([])?.description == "malformed JSON at offset 0: unexpected end of input, expected a value")
        #expect(Self.error(" \n".bytes)?.description == "malformed JSON at offset 2: unexpected end of input, expected a value")
    }

    @Test("100000 nested arrays: rejected at the nesting limit, no crash")
    func deepArrays() throws {
        let error = try #require(Self.error([UInt8](repeating: UInt8(ascii: "["), count: 100_000), maxFrameSize: 1 << 20))
        #expect(error.code == .malformed)
        #expect(error.description == "malformed JSON at offset 32: arrays and objects nest deeper than 32 levels")
    }

    @Test("deep nesting inside an ignored member, objects and arrays mixed")
    func deepInIgnoredMember() throws {
        let opening = String(repeating: #"{"a":["#, count: 50_000)
        let text = #"{"v":1,"type":"ping","id":"1","x":"# + opening
        let error = try #require(Self.error(text.bytes, maxFrameSize: 1 << 20))
        #expect(error.code == .malformed)
        #expect(error.reason == "arrays and objects nest deeper than 32 levels")
        // Exactly 32 levels (the frame's object plus 31) are accepted.
        let ok = #"{"v":1,"type":"ping","id":"1","x":"# + String(repeating: "[", count: 31) + String(repeating: "]", count: 31) + "}"
        #expect(Self.error(ok.bytes) == nil)
        let over = #"{"v":1,"type":"ping","id":"1","x":"# + String(repeating: "[", count: 32) + String(repeating: "]", count: 32) + "}"
        #expect(Self.error(over.bytes)?.code == .malformed)
    }

    @Test("invalid UTF-8 is rejected with its offset, also in ignored members")
    func invalidUTF8() throws {
        let prefix = #"{"v":1,"type":"ping","id":"1","x":""#.bytes
        let cases: [([UInt8], String)] = [
            ([0xFF], "invalid UTF-8 byte 0xff"),
            ([0x80], "invalid UTF-8 byte 0x80"),
            ([0xC0, 0x80], "invalid UTF-8 byte 0xc0"),  // overlong NUL
            ([0xC1, 0xBF], "invalid UTF-8 byte 0xc1"),  // overlong
            ([0xE0, 0x80, 0xAF], "invalid UTF-8 byte 0x80"),  // overlong '/'
            ([0xED, 0xA0, 0x80], "invalid UTF-8 byte 0xa0"),  // encoded surrogate U+D800
            ([0xF4, 0x90, 0x80, 0x80], "invalid UTF-8 byte 0x90"),  // above U+10FFFF
            ([0xF5, 0x80, 0x80, 0x80], "invalid UTF-8 byte 0xf5"),
            ([0xE2, 0x82], "invalid UTF-8 byte 0x22"),  // truncated, then the closing quote
            ([0xE2, 0x28, 0xA1], "invalid UTF-8 byte 0x28"),
        ]
        for (sequence, reason) in cases {
            let frame = prefix + sequence + #""}"#.bytes
            let error = try #require(Self.error(frame), "\(sequence)")
            #expect(error.code == .malformed)
            #expect(error.reason == reason, "\(sequence)")
            #expect(error.offset.map { $0 >= prefix.count && $0 < prefix.count + sequence.count + 1 } == true)
        }
        // Truncated at the very end of input.
        #expect(Self.error(prefix + [0xF0, 0x9F])?.reason == "truncated UTF-8 sequence")
        // Valid multi-byte text everywhere is fine.
        #expect(Self.error(prefix + "é€📞".bytes + #""}"#.bytes) == nil)
        // Outside strings only ASCII structure is allowed.
        #expect(Self.error(#"{"v":1,"type":"ping","id":"1"}"#.bytes + [0xC3, 0xA9])?.code == .malformed)
    }

    @Test("escapes: unpaired surrogates and bad escapes are rejected")
    func badEscapes() {
        func frame(_ escaped: String) -> [UInt8] { #"{"v":1,"type":"ping","id":"1","x":"\#(escaped)"}"#.bytes }
        #expect(Self.error(frame(#"\ud800"#))?.reason == "unpaired surrogate escape")
        #expect(Self.error(frame(#"\udc00"#))?.reason == "unpaired surrogate escape")
        #expect(Self.error(frame(#"\ud800\u0041"#))?.reason == "unpaired surrogate escape")
        #expect(Self.error(frame(#"\ud800x"#))?.reason == "unpaired surrogate escape")
        #expect(Self.error(frame(#"\u12g4"#))?.reason == "expected a hex digit in a \\u escape, found 'g'")
        #expect(Self.error(frame(#"\x41"#))?.reason == "invalid escape sequence \\x")
        #expect(Self.error(frame(#"\ud83d\udcde"#)) == nil)
        #expect(Self.error(frame(#"\u0000"#)) == nil, "NUL may appear escaped in an ignored member")
        #expect(Self.error(#"{"v":1,"type":"ping","id":"1","x":"a"#.bytes + [0x0A] + #""}"#.bytes)?.reason == "control character byte 0x0a in a string must be escaped")
    }

    @Test("duplicate keys are malformed, at any depth, in small and large objects")
    func duplicateKeys() throws {
        let top = try #require(Self.error(#"{"v":1,"type":"ping","id":"1","type":"hello"}"#.bytes))
        #expect(top.code == .malformed)
        #expect(top.description == #"malformed JSON at offset 30: duplicate key "type""#)
        let nested = try #require(Self.error(#"{"v":1,"type":"ping","id":"1","x":{"a":1,"b":2,"a":3}}"#.bytes))
        #expect(nested.reason == #"duplicate key "a""#)
        // Many keys: the set-based check.
        let members = (0..<500).map { #""k\#($0)":0"# }.joined(separator: ",")
        #expect(Self.error(#"{"v":1,"type":"ping","id":"1","x":{\#(members)}}"#.bytes) == nil)
        let duplicated = try #require(Self.error(#"{"v":1,"type":"ping","id":"1","x":{\#(members),"k250":1}}"#.bytes))
        #expect(duplicated.reason == #"duplicate key "k250""#)
        // Keys equal after escapes are the same key.
        #expect(Self.error(#"{"v":1,"type":"ping","id":"1","\u0069d":"2"}"#.bytes)?.reason == #"duplicate key "id""#)
    }

    @Test("syntax errors: trailing data, trailing commas, comments, BOM, top-level non-objects")
    func syntax() {
        let cases: [(String, String)] = [
            (#"{"v":1,"type":"ping","id":"1"} {}"#, "malformed JSON at offset 31: unexpected '{' after the JSON value"),
            (#"{"v":1,"type":"ping","id":"1",}"#, "malformed JSON at offset 30: expected an object key in double quotes, found '}'"),
            (#"{"v":1,"type":"ping","id":"1" /* c */}"#, "malformed JSON at offset 30: expected ',' or '}' in an object, found '/'"),
            (#"{'v':1}"#, "malformed JSON at offset 1: expected an object key in double quotes, found '''"),
            (#"{"v":01}"#, "malformed JSON at offset 6: expected ',' or '}' in an object, found '1'"),
            (#"{"v":+1}"#, "malformed JSON at offset 5: expected a value, found '+'"),
            (#"{"v":1.}"#, "malformed JSON at offset 7: expected a digit after the decimal point"),
            (#"{"v":1e}"#, "malformed JSON at offset 7: expected a digit in the exponent"),
            (#"{"v":-}"#, "malformed JSON at offset 6: expected a digit in a number"),
            (#"{"v":tru}"#, "malformed JSON at offset 5: invalid literal, expected true"),
            (#"{"v":NaN}"#, "malformed JSON at offset 5: expected a value, found 'N'"),
            (#"[1]"#, "frame is a JSON array, not an object"),
            (#""ping""#, "frame is a JSON string, not an object"),
            (#"null"#, "frame is a JSON null, not an object"),
            (#"{"v":1,"type":"ping","id":"1""#, "malformed JSON at offset 29: unexpected end of input, expected ',' or '}'"),
            (#"{"v":1,"type":"ping","id":"1"#, "malformed JSON at offset 26: string is not terminated"),
        ]
        for (text, description) in cases {
            let error = Self.error(text.bytes)
            #expect(error?.code == .malformed, "\(text)")
            #expect(error?.description == description, "\(text)")
        }
        let bom = [0xEF, 0xBB, 0xBF] + #"{"v":1,"type":"ping","id":"1"}"#.bytes
        #expect(Self.error(bom)?.description == "malformed JSON at offset 0: byte-order mark is not allowed")
    }

    @Test("frames over the size limit are refused before parsing")
    func oversizedFrames() throws {
        let huge = #"{"v":1,"type":"ping","id":"1","x":""#.bytes + [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20) + #""}"#.bytes
        let error = try #require(Self.error(huge))
        #expect(error.code == .tooLarge)
        #expect(error.description == "frame of \(huge.count) bytes exceeds the limit of 65536 bytes")
        // With a larger limit the same frame parses; a huge string member is just ignored.
        #expect(Self.error(huge, maxFrameSize: 2 << 20) == nil)
        // A huge string where a bounded one belongs is too_large, naming the member.
        let longID = #"{"v":1,"type":"ping","id":""#.bytes + [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20) + #""}"#.bytes
        let idError = try #require(Self.error(longID, maxFrameSize: 2 << 20))
        #expect(idError.code == .tooLarge)
        #expect(idError.description == #"field "id" of ping: 1048576 bytes exceeds the limit of 64"#)
        // Exactly at the limit is accepted.
        let frame = SignalingCodec.encode(.ping(.init(requestID: "1")))
        #expect(Self.error(frame, maxFrameSize: frame.count) == nil)
        #expect(Self.error(frame, maxFrameSize: frame.count - 1)?.code == .tooLarge)
    }

    @Test("many members and elements stay linear")
    func wideInput() {
        let elements = [String](repeating: "0", count: 30_000).joined(separator: ",")
        #expect(Self.error(#"{"v":1,"type":"ping","id":"1","x":[\#(elements)]}"#.bytes) == nil)
        let members = (0..<5_000).map { #""\#($0)":[]"# }.joined(separator: ",")
        #expect(Self.error(#"{"v":1,"type":"ping","id":"1","x":{\#(members)}}"#.bytes) == nil)
        let capabilities = [String](repeating: #""a""#, count: 10_000).joined(separator: ",")
        let hello = #"{"v":1,"type":"hello","id":"1","appKey":"k","token":"a.b.c","deviceId":"d","sdk":{"name":"x","version":"1"},"capabilities":[\#(capabilities)]}"#
        #expect(Self.error(hello.bytes)?.code == .tooLarge)
    }

    @Test("10000 random byte strings: each decodes or throws")
    func randomBytes() {
        var generator = SeededGenerator(seed: 0x5EED_0001)
        let alphabet = Array(#"{}[]":,.-+eE0123456789truefalsn \"#.utf8) + [0x00, 0x0A, 0x80, 0xC3, 0xFF]
        var problems: [String] = []
        var checked: Set<SignalingError> = []
        for round in 0..<10_000 {
            let length = generator.below(65)
            let bytes: [UInt8] = (0..<length).map { _ in
                round % 2 == 0 ? generator.byte() : alphabet[generator.below(alphabet.count)]
            }
            // Many inputs fail alike; check each distinct error's reply once.
            if let error = Self.error(bytes), checked.insert(error).inserted, let problem = Self.replyProblem(error) {
                problems.append(problem)
            }
        }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }

    @Test("10000 mutations of valid frames: each decodes or throws, and what decodes round-trips")
    func mutatedFrames() throws {
        var generator = SeededGenerator(seed: 0x5EED_0002)
        let frames = Samples.messages.map(SignalingCodec.encode)
        let interesting: [UInt8] = Array(#"{}[]":,\0 9-.e"#.utf8) + [0x00, 0x80, 0xFF]
        var problems: [String] = []
        var checked: Set<SignalingError> = []
        for _ in 0..<10_000 {
            var frame = frames[generator.below(frames.count)]
            for _ in 0...generator.below(4) {
                let position = generator.below(frame.count)
                switch generator.below(4) {
                case 0: frame[position] = generator.byte()
                case 1: frame[position] = interesting[generator.below(interesting.count)]
                case 2: frame.remove(at: position)
                default: frame.insert(interesting[generator.below(interesting.count)], at: position)
                }
                if frame.isEmpty { break }
            }
            do {
                let message = try SignalingCodec.decode(frame)
                if (try? SignalingCodec.decode(SignalingCodec.encode(message))) != message {
                    problems.append("round trip changed \(message)")
                }
            } catch {
                if checked.insert(error).inserted, let problem = Self.replyProblem(error) { problems.append(problem) }
            }
        }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }
}

@Suite("Error replies")
struct ErrorReplyTests {
    @Test("error replies stay valid frames even when they quote hostile text")
    func hostileTextInReplies() throws {
        let longType = String(repeating: "\u{10FFFF}", count: 5_000)
        let frames = [
            #"{"v":1,"type":"\#(longType)","id":"1"}"#,
            #"{"v":1,"type":"call.ended","callId":"\#(Samples.callID)","cause":"\#(longType)","details":{}}"#,
            #"{"v":1,"type":"call.ringing","callId":"\#(Samples.callID)","time":\#(String(repeating: "7", count: 60_000))}"#,
            #"{"v":1,"type":"call.start","id":"2","callId":"\#(Samples.callID)","to":{"kind":"user","address":"a\u0000\u001b\u007f"},"sdp":"v=0"}"#,
            #"{"v":1,"type":"\u0000\n\u2028"}"#,
        ]
        for frame in frames {
            let error = try #require(HostileInputTests.error(frame.bytes))
            let reply = SignalingCodec.errorReply(for: error)
            try SignalingCodec.validate(reply)
            guard case .error(let body) = reply else {
                Issue.record("not an error")
                continue
            }
            #expect(body.message.utf8.count <= SignalingLimits.maxTextBytes)
        }
        let unknown = try #require(HostileInputTests.error(#"{"v":1,"type":"\u0000\n\u2028"}"#.bytes))
        #expect(unknown.description == #"unknown message type "\u{0}\u{a}\u{2028}""#)
    }
}
