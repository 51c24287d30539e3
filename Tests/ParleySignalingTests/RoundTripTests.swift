import ParleySignaling
import Testing

@Suite("Round trips")
struct RoundTripTests {
    @Test("The samples cover every message type")
    func samplesCoverEveryType() {
        let covered = Set(Samples.messages.map(\.type))
        #expect(covered == Set(SignalingMessageType.allCases))
    }

    @Test("encode then decode gives the same value", arguments: Samples.messages)
    func encodeThenDecode(message: SignalingMessage) throws {
        let frame = SignalingCodec.encode(message)
        let decoded = try SignalingCodec.decode(frame)
        #expect(decoded == message)
        #expect(decoded.type == message.type)
    }

    @Test("decode then encode gives the same bytes", arguments: Samples.messages)
    func decodeThenEncode(message: SignalingMessage) throws {
        let frame = SignalingCodec.encode(message)
        let again = SignalingCodec.encode(try SignalingCodec.decode(frame))
        #expect(again == frame)
    }

    @Test("every sample is valid and its direction is accepted")
    func samplesValidate() throws {
        for message in Samples.messages {
            try SignalingCodec.validate(message)
            _ = try SignalingCodec.decode(SignalingCodec.encode(message), sender: message.direction)
        }
    }

    @Test("the envelope comes first: v, type, then id or re")
    func envelopeOrder() {
        let hangup = SignalingCodec.encodeToString(.callHangup(.init(requestID: "12", callID: Samples.callID)))
        #expect(hangup == #"{"v":1,"type":"call.hangup","id":"12","callId":"6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13"}"#)
        let result = SignalingCodec.encodeToString(.result(.init(replyTo: "2")))
        #expect(result == #"{"v":1,"type":"result","re":"2"}"#)
    }

    @Test("headers are written sorted by name, with JSON escapes")
    func headerEncoding() {
        let start = SignalingMessage.callStart(.init(
            requestID: "2", callID: Samples.callID, to: .user("bob"),
            headers: ["b": "2", "B": "1", "a": "x\"y\\z\u{1F4DE}"], sdp: "v=0\r\n"
        ))
        let text = SignalingCodec.encodeToString(start)
        #expect(text.contains(#""headers":{"B":"1","a":"x\"y\\z📞","b":"2"}"#))
        #expect(text.hasSuffix(#""video":false,"sdp":"v=0\r\n"}"#))
    }

    @Test("accessors: requestID, replyTo, callID")
    func accessors() {
        let start = Samples.messages.first { $0.type == .callStart }
        #expect(start?.requestID == "2")
        #expect(start?.callID == Samples.callID)
        #expect(start?.replyTo == nil)
        let pong = SignalingMessage.pong(.init(replyTo: "17"))
        #expect(pong.replyTo == "17")
        #expect(pong.requestID == nil)
        #expect(pong.callID == nil)
        #expect(SignalingMessageType.callIncoming.direction == .serverToDevice)
        #expect(SignalingMessageType.callAck.direction == .deviceToServer)
    }

    @Test("whitespace and member order do not matter")
    func whitespaceAndOrder() throws {
        let text = " {\n \"callId\" : \"6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13\",\t\"id\":\"12\", \"type\":\"call.hangup\",\r\n\"v\":1 } \n"
        #expect(try SignalingCodec.decode(text) == .callHangup(.init(requestID: "12", callID: Samples.callID)))
    }

    @Test("escapes decode to the same text: \\u, surrogate pairs, \\/")
    func escapes() throws {
        let text = #"{"v":1,"type":"error","code":"internal_error","message":"a\/b \u00e9 \ud83d\udcde \"\\"}"#
        let decoded = try SignalingCodec.decode(text)
        #expect(decoded == .error(.init(replyTo: nil, code: .internalError, message: "a/b é 📞 \"\\")))
        #expect(SignalingCodec.encodeToString(decoded) == #"{"v":1,"type":"error","code":"internal_error","message":"a/b é 📞 \"\\"}"#)
    }
}
