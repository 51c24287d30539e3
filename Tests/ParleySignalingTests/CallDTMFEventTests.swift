import ParleySignaling
import Testing

/// `call.dtmf` both ways: the device's request (with `id`) and the server's event (without),
/// one type string, told apart by the sender or, when the reader does not know it, by `id`.
@Suite("call.dtmf request and event")
struct CallDTMFEventTests {
    static let callID = Samples.callID
    static let event = #"{"v":1,"type":"call.dtmf","callId":"\#(callID)","digits":"12#","time":1764421207000}"#
    static let request = #"{"v":1,"type":"call.dtmf","id":"13","callId":"\#(callID)","digits":"12#"}"#

    static func error(_ text: String, sender: SignalingMessageType.Direction? = nil) -> SignalingError? {
        signalingError { () throws(SignalingError) in try SignalingCodec.decode(text, sender: sender) }
    }

    @Test("the event's wire form: callId, digits, time, and no id")
    func eventWireForm() throws {
        let message = SignalingMessage.callDTMFReceived(.init(callID: Self.callID, digits: "12#", time: 1_764_421_207_000))
        #expect(SignalingCodec.encodeToString(message) == Self.event)
        #expect(try SignalingCodec.decode(Self.event) == message)
        #expect(try SignalingCodec.decode(Self.event, sender: .serverToDevice) == message)
        #expect(message.type == .callDTMF && message.direction == .serverToDevice)
        #expect(message.requestID == nil && message.replyTo == nil && message.callID == Self.callID)
        try SignalingCodec.validate(message)
    }

    @Test("without a sender, an id makes the request and its absence the event")
    func formByID() throws {
        guard case .callDTMF(let request) = try SignalingCodec.decode(Self.request) else {
            Issue.record("a call.dtmf with an id is the request")
            return
        }
        #expect(request.requestID == "13" && request.digits == "12#")
        #expect(SignalingMessage.callDTMF(request).direction == .deviceToServer)
        guard case .callDTMFReceived = try SignalingCodec.decode(Self.event) else {
            Issue.record("a call.dtmf without an id is the event")
            return
        }
        // `null` is absent, for `id` too.
        let nullID = #"{"v":1,"type":"call.dtmf","id":null,"callId":"\#(Self.callID)","digits":"5","time":1}"#
        guard case .callDTMFReceived(let event) = try SignalingCodec.decode(nullID) else {
            Issue.record("id null is no id")
            return
        }
        #expect(event.digits == "5" && event.time == 1)
    }

    @Test("a known sender decides the form: a device's call.dtmf needs its id")
    func formBySender() throws {
        let missingID = try #require(Self.error(Self.event, sender: .deviceToServer))
        #expect(missingID.code == .badRequest && missingID.field == "id")
        #expect(missingID.description == #"field "id" of call.dtmf: is required"#)
        guard case .callDTMF = try SignalingCodec.decode(Self.request, sender: .deviceToServer) else {
            Issue.record("the request from a device")
            return
        }
        // From the server an `id` is a member the event does not define: ignored.
        let withID = #"{"v":1,"type":"call.dtmf","id":"7","callId":"\#(Self.callID)","digits":"9","time":2}"#
        #expect(try SignalingCodec.decode(withID, sender: .serverToDevice)
            == .callDTMFReceived(.init(callID: Self.callID, digits: "9", time: 2)))
        // The request read as the server's event misses the event's time.
        let noTime = try #require(Self.error(Self.request, sender: .serverToDevice))
        #expect(noTime.field == "time" && noTime.reason == "is required")
    }

    @Test("both sides send call.dtmf; every other type has one sender")
    func directions() {
        #expect(SignalingMessageType.callDTMF.isSent(by: .deviceToServer))
        #expect(SignalingMessageType.callDTMF.isSent(by: .serverToDevice))
        #expect(SignalingMessageType.callDTMF.direction == .deviceToServer, "the request's sender, as before")
        for type in SignalingMessageType.allCases where type != .callDTMF {
            #expect(type.isSent(by: type.direction) && !type.isSent(by: type.direction == .deviceToServer ? .serverToDevice : .deviceToServer),
                    "\(type.rawValue)")
        }
        #expect(Samples.messages.contains { if case .callDTMFReceived = $0 { true } else { false } })
        #expect(Samples.messages.contains { if case .callDTMF = $0 { true } else { false } })
    }

    @Test("the event's digits: 1-32 of 0-9 * # A-D, and a time", arguments: [
        (#""digits":"","time":1"#, SignalingErrorCode.badRequest, "digits", "must not be empty"),
        (#""digits":"123456789012345678901234567890123","time":1"#, .tooLarge, "digits", "33 bytes exceeds the limit of 32"),
        (#""digits":"12a","time":1"#, .badRequest, "digits", "character 'a' at byte 2 is not allowed (allowed: 0-9 * # A B C D)"),
        (#""digits":"E","time":1"#, .badRequest, "digits", "character 'E' at byte 0 is not allowed (allowed: 0-9 * # A B C D)"),
        (#""digits":5,"time":1"#, .badRequest, "digits", "expected a string, found number"),
        (#""time":1"#, .badRequest, "digits", "is required"),
        (#""digits":"1""#, .badRequest, "time", "is required"),
        (#""digits":"1","time":-1"#, .badRequest, "time", "-1 is out of range 0...9007199254740991"),
        (#""digits":"1","time":1.5"#, .badRequest, "time", "expected an integer, found 1.5"),
        (#""digits":"1","time":"1""#, .badRequest, "time", "expected an integer, found string"),
    ])
    func malformedEvents(members: String, code: SignalingErrorCode, field: String, reason: String) throws {
        let frame = #"{"v":1,"type":"call.dtmf","callId":"\#(Self.callID)",\#(members)}"#
        for sender in [nil, SignalingMessageType.Direction.serverToDevice] {
            let error = try #require(Self.error(frame, sender: sender), "\(frame)")
            #expect(error.code == code && error.field == field && error.reason == reason, "\(error)")
            #expect(error.messageType == .callDTMF && error.requestID == nil)
        }
    }

    @Test("32 digits, the limit, are accepted; the call id must be a call id")
    func limits() throws {
        let digits = String(repeating: "0123456789*#ABCD", count: 2)
        let frame = #"{"v":1,"type":"call.dtmf","callId":"\#(Self.callID)","digits":"\#(digits)","time":9007199254740991}"#
        #expect(try SignalingCodec.decode(frame) == .callDTMFReceived(.init(callID: Self.callID, digits: digits, time: 9_007_199_254_740_991)))
        let badCall = try #require(Self.error(#"{"v":1,"type":"call.dtmf","callId":"c-1","digits":"1","time":1}"#))
        #expect(badCall.field == "callId" && badCall.code == .badRequest)
    }
}
