import ParleySignaling
import Testing

/// `call.talking`: the room's talkers, for each participant's device.
@Suite("call.talking event")
struct CallTalkingTests {
    static let callID = Samples.callID
    static let otherCallID = "0d6b9f64-1e2a-4f8c-8b37-6a5c2e1f9d08"
    static let frame =
        #"{"v":1,"type":"call.talking","callId":"\#(callID)","talking":[{"id":"\#(otherCallID)","user":"alice"},{"id":"\#(callID)","user":"bob"}]}"#

    static func error(_ text: String) -> SignalingError? {
        signalingError { () throws(SignalingError) in try SignalingCodec.decode(text) }
    }

    static func frame(talking members: String) -> String {
        #"{"v":1,"type":"call.talking","callId":"\#(callID)"\#(members)}"#
    }

    @Test("wire form: callId, then talking with id and user, loudest first")
    func wireForm() throws {
        let message = SignalingMessage.callTalking(.init(callID: Self.callID, talking: [
            .init(callID: Self.otherCallID, userID: "alice"), .init(callID: Self.callID, userID: "bob"),
        ]))
        #expect(SignalingCodec.encodeToString(message) == Self.frame)
        #expect(try SignalingCodec.decode(Self.frame) == message)
        #expect(try SignalingCodec.decode(Self.frame, sender: .serverToDevice) == message)
        #expect(message.type == .callTalking && message.direction == .serverToDevice)
        #expect(message.requestID == nil && message.replyTo == nil && message.callID == Self.callID)
        try SignalingCodec.validate(message)
    }

    @Test("an empty list says nobody talks; a missing one is an error")
    func emptyAndMissing() throws {
        let empty = SignalingMessage.callTalking(.init(callID: Self.callID, talking: []))
        #expect(SignalingCodec.encodeToString(empty) == Self.frame(talking: #","talking":[]"#))
        #expect(try SignalingCodec.decode(Self.frame(talking: #","talking":[]"#)) == empty)
        for members in ["", #","talking":null"#] {
            let missing = try #require(Self.error(Self.frame(talking: members)))
            #expect(missing.code == .badRequest && missing.field == "talking" && missing.reason == "is required", "\(missing)")
        }
    }

    @Test("a device never sends it")
    func deviceDoesNotSend() throws {
        #expect(SignalingMessageType.callTalking.isSent(by: .serverToDevice))
        #expect(!SignalingMessageType.callTalking.isSent(by: .deviceToServer))
        let fromDevice = try #require(signalingError { () throws(SignalingError) in
            try SignalingCodec.decode(Self.frame, sender: .deviceToServer)
        })
        #expect(fromDevice.code == .unknownType && fromDevice.field == "type", "\(fromDevice)")
        #expect(fromDevice.reason == "message type call.talking is only sent by the server")
    }

    @Test("malformed talkers get a typed error naming the entry", arguments: [
        (#","talking":{}"#, SignalingErrorCode.badRequest, "talking", "expected an array, found object"),
        (#","talking":["alice"]"#, .badRequest, "talking[0]", "expected an object, found string"),
        (#","talking":[{"user":"alice"}]"#, .badRequest, "talking[0].id", "is required"),
        (#","talking":[{"id":"\#(otherCallID)"}]"#, .badRequest, "talking[0].user", "is required"),
        (#","talking":[{"id":"c-1","user":"alice"}]"#, .badRequest, "talking[0].id", nil),
        (#","talking":[{"id":"\#(otherCallID)","user":""}]"#, .badRequest, "talking[0].user", "must not be empty"),
        (#","talking":[{"id":"\#(otherCallID)","user":5}]"#, .badRequest, "talking[0].user", "expected a string, found number"),
    ] as [(String, SignalingErrorCode, String, String?)])
    func malformed(members: String, code: SignalingErrorCode, field: String, reason: String?) throws {
        let error = try #require(Self.error(Self.frame(talking: members)), "\(members)")
        #expect(error.code == code && error.field == field, "\(error)")
        if let reason { #expect(error.reason == reason, "\(error)") }
        #expect(error.messageType == .callTalking)
    }

    @Test("100 talkers, the limit, are read; 101 are too many")
    func limit() throws {
        let entry = #"{"id":"\#(Self.otherCallID)","user":"alice"}"#
        let hundred = Array(repeating: entry, count: SignalingLimits.maxTalkers).joined(separator: ",")
        guard case .callTalking(let event) = try SignalingCodec.decode(Self.frame(talking: #","talking":[\#(hundred)]"#)) else {
            Issue.record("100 talkers are a call.talking")
            return
        }
        #expect(event.talking.count == 100)
        let over = try #require(Self.error(Self.frame(talking: #","talking":[\#(hundred),\#(entry)]"#)))
        #expect(over.code == .tooLarge && over.field == "talking", "\(over)")
        #expect(over.reason == "101 entries exceeds the limit of 100")
    }
}
