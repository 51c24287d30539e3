import ParleySignaling
import Testing

/// `headers` on `call.ringing` and `call.answered`: the far side's `x-` SIP headers, under
/// `call.start`'s header rules and limits; absent when empty; not a member of the other events.
@Suite("Response headers on call.ringing and call.answered")
struct ResponseHeadersTests {
    static let callID = Samples.callID

    static func frame(_ type: String, headers: String?) -> String {
        #"{"v":1,"type":"\#(type)","callId":"\#(callID)","time":5"# + (headers.map { #","headers":\#($0)"# } ?? "") + "}"
    }

    static func error(_ text: String) -> SignalingError? {
        signalingError { () throws(SignalingError) in try SignalingCodec.decode(text, sender: .serverToDevice) }
    }

    @Test("written after time, names sorted; omitted when empty")
    func wireForm() throws {
        let ringing = SignalingMessage.callRinging(.init(callID: Self.callID, time: 5, headers: ["x-b": "2", "X-A": "1"]))
        #expect(SignalingCodec.encodeToString(ringing) == Self.frame("call.ringing", headers: #"{"X-A":"1","x-b":"2"}"#))
        #expect(try SignalingCodec.decode(SignalingCodec.encode(ringing)) == ringing)
        let answered = SignalingMessage.callAnswered(.init(callID: Self.callID, time: 5, headers: ["x-agent": "7"]))
        #expect(SignalingCodec.encodeToString(answered) == Self.frame("call.answered", headers: #"{"x-agent":"7"}"#))
        #expect(try SignalingCodec.decode(SignalingCodec.encode(answered), sender: .serverToDevice) == answered)
        let plain = SignalingMessage.callAnswered(.init(callID: Self.callID, time: 5))
        #expect(SignalingCodec.encodeToString(plain) == Self.frame("call.answered", headers: nil))
        // An empty object (or null) is no headers; re-encoding omits it.
        for empty in ["{}", "null"] {
            #expect(try SignalingCodec.decode(Self.frame("call.ringing", headers: empty)) == .callRinging(.init(callID: Self.callID, time: 5)))
        }
    }

    @Test("call.progress and call.established have no headers member: it is ignored and never written")
    func otherEvents() throws {
        let headers = #"{"x-a":"1"}"#
        #expect(try SignalingCodec.decode(Self.frame("call.progress", headers: headers)) == .callProgress(.init(callID: Self.callID, time: 5)))
        #expect(try SignalingCodec.decode(Self.frame("call.established", headers: #"{"bad name":1}"#))
            == .callEstablished(.init(callID: Self.callID, time: 5)))
        let progress = SignalingMessage.callProgress(.init(callID: Self.callID, time: 5, headers: ["x-a": "1"]))
        #expect(SignalingCodec.encodeToString(progress) == Self.frame("call.progress", headers: nil))
    }

    @Test("call.start's header rules and limits", arguments: ["call.ringing", "call.answered"])
    func rules(type: String) throws {
        let badName = try #require(Self.error(Self.frame(type, headers: #"{"x a":"1"}"#)))
        #expect(badName.code == .badRequest && badName.field == "headers")
        #expect(badName.description == #"field "headers" of \#(type): header name "x a": character ' ' at byte 1 is not allowed (allowed: A-Z a-z 0-9 - _ .)"#)
        let number = try #require(Self.error(Self.frame(type, headers: #"{"x-n":1}"#)))
        #expect(number.field == "headers.x-n" && number.reason == "expected a string, found number")
        let control = try #require(Self.error(Self.frame(type, headers: #"{"x-n":"a\r\nInjected: 1"}"#)))
        #expect(control.field == "headers.x-n" && control.code == .badRequest)
        let notObject = try #require(Self.error(Self.frame(type, headers: #""x-a: 1""#)))
        #expect(notObject.reason == "expected an object, found string")
        let many = (0..<65).map { #""x-\#($0)":"""# }.joined(separator: ",")
        let tooMany = try #require(Self.error(Self.frame(type, headers: "{\(many)}")))
        #expect(tooMany.code == .tooLarge && tooMany.reason == "65 headers exceeds the limit of 64")
        // 1024 bytes of names and values pass; one more is too large.
        let atLimit = #"{"x-a":"\#(String(repeating: "v", count: 1021))"}"#
        #expect(Self.error(Self.frame(type, headers: atLimit)) == nil)
        let over = #"{"x-a":"\#(String(repeating: "v", count: 1022))"}"#
        let tooLarge = try #require(Self.error(Self.frame(type, headers: over)))
        #expect(tooLarge.code == .tooLarge && tooLarge.description == #"field "headers" of \#(type): total size 1025 bytes exceeds 1024"#)
    }
}
