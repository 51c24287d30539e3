import ParleyWireCore
import Foundation
import Testing
@testable import ParleyWebSocket
import ParleyTestSupport

/// UTF-8 validation and the JSON forms `parley inspect` prints.
@Suite("Encodings and JSON") struct EncodingTests {

    @Test("UTF-8 validator matches the standard library on 1-4 byte sequences around every boundary")
    func validatorAgreesWithStdlib() {
        var samples: [[UInt8]] = []
        let interesting: [UInt8] = [0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed,
                                    0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff]
        for a in interesting { samples.append([a]); for b in interesting { samples.append([a, b]); for c in interesting { samples.append([a, b, c]) } } }
        let continuations: [UInt8] = [0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0]
        for a in [UInt8(0xf0), 0xf1, 0xf4, 0xf5] { for b in continuations { for c in continuations { for d in continuations { samples.append([a, b, c, d]) } } } }
        for sample in samples {
            var validator = UTF8Validator()
            let ours = validator.validate(sample) == nil && validator.isAtBoundary
            let theirs = String(validating: sample, as: UTF8.self) != nil
            #expect(ours == theirs, "\(sample)")
        }
    }

    @Test("UTF-8 fails fast: the index of the first byte that cannot continue")
    func validatorIndex() {
        var validator = UTF8Validator()
        #expect(validator.validate(Array("abcdefghij".utf8) + [0xed, 0xa0]) == 11)
        var split = UTF8Validator()
        #expect(split.validate([0xf0, 0x9f]) == nil)
        #expect(!split.isAtBoundary)
        #expect(split.validate([0x98, 0x80]) == nil)
        #expect(split.isAtBoundary)
        #expect(split.validate([0xe0, 0x80]) == 1)
    }

    private func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test("JSON of frames: every header field, hex payload, text and close decoded")
    func frameJSON() throws {
        let text = try WebSocketFrame.parse(hex("81 85 37 fa 21 3d 7f 9f 4d 51 58"))
        #expect(try json(text) == #"{"fin":true,"masked":true,"maskingKey":"37fa213d","opcode":1,"opcodeName":"text","payload":"48656c6c6f","payloadLength":5,"rsv1":false,"rsv2":false,"rsv3":false,"text":"Hello"}"#)
        let close = WebSocketFrame.close(WebSocketClose(code: .goingAway, reason: "bye"))
        #expect(try json(close) == #"{"close":{"code":1001,"codeName":"goingAway","reason":"bye"},"closeError":null,"fin":true,"masked":false,"maskingKey":null,"opcode":8,"opcodeName":"close","payload":"03e9627965","payloadLength":5,"rsv1":false,"rsv2":false,"rsv3":false}"#)
        let badText = WebSocketFrame(fin: false, opcode: .text, payload: [0xce])
        #expect(try json(badText).contains(#""text":null"#))
        let reserved = WebSocketFrame(rsv1: true, opcode: opcode(0xb))
        #expect(try json(reserved) == #"{"fin":true,"masked":false,"maskingKey":null,"opcode":11,"opcodeName":"reserved-0xb","payload":"","payloadLength":0,"rsv1":true,"rsv2":false,"rsv3":false}"#)
    }

    @Test("JSON of handshake messages, events and errors")
    func otherJSON() throws {
        let request = try WebSocketUpgradeRequest.parse(Array(RFC6455ExampleTests.requestText.utf8))
        #expect(try json(request) == #"{"extensions":[],"headers":[{"name":"Host","value":"server.example.com"},{"name":"Upgrade","value":"websocket"},{"name":"Connection","value":"Upgrade"},{"name":"Sec-WebSocket-Key","value":"dGhlIHNhbXBsZSBub25jZQ=="},{"name":"Origin","value":"http://example.com"},{"name":"Sec-WebSocket-Protocol","value":"chat, superchat"},{"name":"Sec-WebSocket-Version","value":"13"}],"host":"server.example.com","key":"dGhlIHNhbXBsZSBub25jZQ==","method":"GET","origin":"http://example.com","path":"/chat","query":null,"subprotocols":["chat","superchat"],"target":"/chat","version":"HTTP/1.1","webSocketVersion":"13"}"#)
        let response = try WebSocketUpgradeResponse.accepting(request)
        #expect(try json(response) == #"{"accept":"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=","body":"","headers":[{"name":"Upgrade","value":"websocket"},{"name":"Connection","value":"Upgrade"},{"name":"Sec-WebSocket-Accept","value":"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="}],"reason":"Switching Protocols","status":101,"subprotocol":null,"version":"HTTP/1.1"}"#)
        let events = run(clientFrame(.text, "hi") + clientFrame(.ping, [1]) + clientFrame(opcode(3)))
        #expect(try json(events) == #"[{"event":"text","text":"hi"},{"event":"sendPong","payload":"01"},{"error":{"closeCode":1002,"httpStatus":null,"kind":"reservedOpcode","line":null,"message":"reserved opcode at offset 15: opcode 0x3 is reserved and no extension was negotiated","offset":15},"event":"failConnection"}]"#)
        #expect(try json(WebSocketClose(code: nil)) == #"{"code":null,"codeName":null,"reason":""}"#)
    }
}
