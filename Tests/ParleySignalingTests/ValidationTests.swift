import ParleySignaling
import Testing

/// Fields that break their rules: each error names the field, the message type, the
/// request id, and says what is wrong.
@Suite("Field validation")
struct ValidationTests {
    static let callID = Samples.callID

    /// A call.start frame with `members` spliced in place of the defaults.
    static func callStart(to: String = #"{"kind":"user","address":"bob"}"#, headers: String = "{}", extra: String = "") -> String {
        #"{"v":1,"type":"call.start","id":"2","callId":"\#(callID)","to":\#(to),"headers":\#(headers),"sdp":"v=0\r\n"\#(extra)}"#
    }

    static func error(_ text: String) -> SignalingError? {
        signalingError { () throws(SignalingError) in try SignalingCodec.decode(text) }
    }

    @Test("headers over 1024 bytes in total: too_large with the documented message")
    func headersTooLarge() throws {
        // 10 headers of 4-byte names and 146-byte values: 1500 bytes.
        let members = (0..<10).map { #""h-0\#($0)":"\#(String(repeating: "x", count: 146))""# }.joined(separator: ",")
        let error = try #require(Self.error(Self.callStart(headers: "{\(members)}")))
        #expect(error.code == .tooLarge)
        #expect(error.field == "headers")
        #expect(error.messageType == .callStart)
        #expect(error.requestID == "2")
        #expect(error.description == #"field "headers" of call.start: total size 1500 bytes exceeds 1024"#)
    }

    @Test("headers of exactly 1024 bytes are accepted")
    func headersAtLimit() throws {
        let value = String(repeating: "v", count: 1024 - 5)
        let message = try SignalingCodec.decode(Self.callStart(headers: #"{"h-001":"\#(value)"}"#))
        guard case .callStart(let start) = message else {
            Issue.record("not call.start")
            return
        }
        #expect(start.headers["h-001"]?.utf8.count == 1019)
    }

    @Test("header rules: name alphabet, value type, control characters, count")
    func headerRules() throws {
        let badName = try #require(Self.error(Self.callStart(headers: #"{"X Order":"1"}"#)))
        #expect(badName.code == .badRequest)
        #expect(badName.description == #"field "headers" of call.start: header name "X Order": character ' ' at byte 1 is not allowed (allowed: A-Z a-z 0-9 - _ .)"#)
        let number = try #require(Self.error(Self.callStart(headers: #"{"n":1}"#)))
        #expect(number.field == "headers.n")
        #expect(number.reason == "expected a string, found number")
        let control = try #require(Self.error(Self.callStart(headers: #"{"n":"a\r\nInjected: 1"}"#)))
        #expect(control.field == "headers.n")
        #expect(control.reason == #"control character '\u{d}' at byte 1 is not allowed"#)
        let many = (0..<65).map { #""h\#($0)":"""# }.joined(separator: ",")
        let tooMany = try #require(Self.error(Self.callStart(headers: "{\(many)}")))
        #expect(tooMany.code == .tooLarge)
        #expect(tooMany.reason == "65 headers exceeds the limit of 64")
        let notObject = try #require(Self.error(Self.callStart(headers: "[]")))
        #expect(notObject.reason == "expected an object, found array")
    }

    @Test("displayName: optional text of at most 255 bytes, no control characters")
    func displayNames() throws {
        let ok = String(repeating: "ö", count: 127)
        guard case .callStart(let start) = try SignalingCodec.decode(Self.callStart(extra: #","displayName":"\#(ok)""#)) else {
            Issue.record("not call.start")
            return
        }
        #expect(start.displayName == ok)
        guard case .callStart(let plain) = try SignalingCodec.decode(Self.callStart()) else { return }
        #expect(plain.displayName == nil)
        let long = try #require(Self.error(Self.callStart(extra: #","displayName":"\#(ok)ab""#)))
        #expect(long.code == .tooLarge && long.field == "displayName")
        let control = try #require(Self.error(Self.callStart(extra: #","displayName":"A\nB""#)))
        #expect(control.code == .badRequest && control.field == "displayName")
        let number = try #require(Self.error(Self.callStart(extra: #","displayName":7"#)))
        #expect(number.reason == "expected a string, found number")
    }

    @Test("user ids: at most 255 bytes of A-Z a-z 0-9 - _ =")
    func userIDs() throws {
        let ok = String(repeating: "a", count: 255)
        _ = try SignalingCodec.decode(Self.callStart(to: #"{"kind":"user","address":"\#(ok)"}"#))
        _ = try SignalingCodec.decode(Self.callStart(to: #"{"kind":"user","address":"A-z_0="}"#))
        let long = try #require(Self.error(Self.callStart(to: #"{"kind":"user","address":"\#(ok)a"}"#)))
        #expect(long.code == .tooLarge)
        #expect(long.description == #"field "to.address" of call.start: 256 bytes exceeds the limit of 255"#)
        let space = try #require(Self.error(Self.callStart(to: #"{"kind":"user","address":"bob smith"}"#)))
        #expect(space.code == .badRequest)
        #expect(space.description == #"field "to.address" of call.start: character ' ' at byte 3 is not allowed (allowed: A-Z a-z 0-9 - _ =)"#)
        let accent = try #require(Self.error(Self.callStart(to: #"{"kind":"user","address":"zoë"}"#)))
        #expect(accent.reason == #"character '\u{eb}' at byte 2 is not allowed (allowed: A-Z a-z 0-9 - _ =)"#)
        let empty = try #require(Self.error(Self.callStart(to: #"{"kind":"user","address":""}"#)))
        #expect(empty.reason == "must not be empty")
    }

    @Test("addresses of each kind")
    func addresses() throws {
        let cases: [(String, String?)] = [
            (#"{"kind":"phone","address":"+46701234567"}"#, nil),
            (#"{"kind":"phone","address":"46701234567"}"#, "must be an E.164 number: '+' then 2 to 15 digits, the first not 0"),
            (#"{"kind":"phone","address":"+0701234567"}"#, "must be an E.164 number: '+' then 2 to 15 digits, the first not 0"),
            (#"{"kind":"phone","address":"+1234567890123456"}"#, "17 bytes exceeds the limit of 16"),
            (#"{"kind":"phone","address":"+4670-123"}"#, "character '-' at byte 5 is not allowed (allowed: + 0-9)"),
            (#"{"kind":"sip","address":"sip:bob@example.com"}"#, nil),
            (#"{"kind":"sip","address":"SIPS:bob@example.com;transport=tls"}"#, nil),
            (#"{"kind":"sip","address":"tel:+4670"}"#, "must be a SIP URI starting with sip: or sips:"),
            (#"{"kind":"sip","address":"sip:"}"#, "must name a user or host after the scheme"),
            (#"{"kind":"sip","address":"<sip:bob@example.com>"}"#, #"character '<' at byte 0 is not allowed (allowed: printable ASCII except < > ")"#),
            (#"{"kind":"conference","address":"room-1"}"#, nil),
            (#"{"kind":"conference","address":"room.1"}"#, "character '.' at byte 4 is not allowed (allowed: A-Z a-z 0-9 - _ =)"),
        ]
        for (to, reason) in cases {
            let error = Self.error(Self.callStart(to: to))
            #expect(error?.reason == reason, "\(to)")
            if reason != nil { #expect(error?.field == "to.address") }
        }
        let kind = try #require(Self.error(Self.callStart(to: #"{"kind":"pstn","address":"+4670"}"#)))
        #expect(kind.description == #"field "to.kind" of call.start: "pstn" is not one of: user, phone, sip, conference"#)
        let missing = try #require(Self.error(Self.callStart(to: #"{"kind":"user"}"#)))
        #expect(missing.description == #"field "to.address" of call.start: is required"#)
        let notObject = try #require(Self.error(Self.callStart(to: #""bob""#)))
        #expect(notObject.description == #"field "to" of call.start: expected an object, found string"#)
    }

    @Test("call ids: lower-case canonical UUIDs")
    func callIDs() throws {
        let cases: [(String, String)] = [
            ("6F1C2A9E-3B7D-4C55-9A41-0E8F5D2B7C13", "character 'F' at byte 1 is not allowed (allowed: 0-9 a-f -)"),
            ("6f1c2a9e3b7d4c559a410e8f5d2b7c13", "must be a lower-case UUID (36 characters), found 32 characters"),
            ("6f1c2a9e-3b7d4-c55-9a41-0e8f5d2b7c13", "must be a lower-case UUID (8-4-4-4-12 hex digits): unexpected '4' at byte 13"),
            ("6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13a", "37 bytes exceeds the limit of 36"),
            ("", "must not be empty"),
        ]
        for (callID, reason) in cases {
            let error = try #require(Self.error(#"{"v":1,"type":"call.hangup","id":"1","callId":"\#(callID)"}"#))
            #expect(error.reason == reason)
            #expect(error.field == "callId")
            #expect(error.messageType == .callHangup)
        }
    }

    @Test("required members, wrong JSON types, and null as absent")
    func presenceAndTypes() throws {
        let missingID = try #require(Self.error(#"{"v":1,"type":"ping"}"#))
        #expect(missingID.description == #"field "id" of ping: is required"#)
        #expect(missingID.requestID == nil)
        let nullID = try #require(Self.error(#"{"v":1,"type":"ping","id":null}"#))
        #expect(nullID.reason == "is required")
        let numberID = try #require(Self.error(#"{"v":1,"type":"ping","id":7}"#))
        #expect(numberID.description == #"field "id" of ping: expected a string, found number"#)
        let badID = try #require(Self.error(#"{"v":1,"type":"ping","id":"a b"}"#))
        #expect(badID.reason == "character ' ' at byte 1 is not allowed (allowed: A-Z a-z 0-9 . _ : -)")
        #expect(badID.requestID == nil, "an invalid id is not echoed as re")
        let video = try #require(Self.error(Self.callStart(extra: #","video":"yes""#)))
        #expect(video.description == #"field "video" of call.start: expected true or false, found string"#)
        // null optional members are absent.
        let message = try SignalingCodec.decode(#"{"v":1,"type":"push.unregister","id":"8","token":null}"#)
        #expect(message == .pushUnregister(.init(requestID: "8", token: nil)))
    }

    @Test("times: integers from 0 to 2^53 - 1")
    func times() throws {
        func ringing(_ time: String) -> String {
            #"{"v":1,"type":"call.ringing","callId":"\#(Samples.callID)","time":\#(time)}"#
        }
        _ = try SignalingCodec.decode(ringing("0"))
        _ = try SignalingCodec.decode(ringing("9007199254740991"))
        let cases: [(String, String)] = [
            ("9007199254740992", "9007199254740992 is out of range 0...9007199254740991"),
            ("-1", "-1 is out of range 0...9007199254740991"),
            ("1.5", "expected an integer, found 1.5"),
            ("1e3", "expected an integer, found 1e3"),
            ("1764421201420.0", "expected an integer, found 1764421201420.0"),
            ("99999999999999999999999999", "99999999999999999999999999 is out of range 0...9007199254740991"),
            ("1e400", "expected an integer, found 1e400"),
            ("-9223372036854775809", "-9223372036854775809 is out of range 0...9007199254740991"),
            (String(repeating: "9", count: 5000), String(repeating: "9", count: 32) + "\u{2026} is out of range 0...9007199254740991"),
            (#""1764421201420""#, "expected an integer, found string"),
            ("true", "expected an integer, found boolean"),
        ]
        for (time, reason) in cases {
            let error = try #require(Self.error(ringing(time)), "\(time)")
            #expect(error.reason == reason)
            #expect(error.field == "time")
            #expect(error.code == .badRequest)
        }
    }

    @Test("call.ended: end causes, error present exactly for cause error, details")
    func callEnded() throws {
        func ended(_ members: String) -> String {
            #"{"v":1,"type":"call.ended","callId":"\#(Samples.callID)",\#(members)}"#
        }
        let details = #""details":{"startedTime":1,"endedTime":2}"#
        let none = try #require(Self.error(ended(#""cause":"none",\#(details)"#)))
        #expect(none.description == #"field "cause" of call.ended: "none" is not one of: timeout, denied, noAnswer, error, hungUp, canceled, otherDeviceAnswered, inactive"#)
        let lowerCase = try #require(Self.error(ended(#""cause":"hungup",\#(details)"#)))
        #expect(lowerCase.field == "cause")
        let noError = try #require(Self.error(ended(#""cause":"error",\#(details)"#)))
        #expect(noError.description == #"field "error" of call.ended: is required when cause is error"#)
        let extraError = try #require(Self.error(ended(#""cause":"denied","error":{"code":"x","message":"y"},\#(details)"#)))
        #expect(extraError.description == #"field "error" of call.ended: is only allowed when cause is error, not denied"#)
        let badCode = try #require(Self.error(ended(#""cause":"error","error":{"code":"Not-Found","message":"y"},\#(details)"#)))
        #expect(badCode.field == "error.code")
        let noEnd = try #require(Self.error(ended(#""cause":"timeout","details":{"startedTime":1}"#)))
        #expect(noEnd.description == #"field "details.endedTime" of call.ended: is required"#)
        // Times out of order are accepted (wall-clock readings).
        _ = try SignalingCodec.decode(ended(#""cause":"timeout","details":{"startedTime":5,"endedTime":2}"#))
        // An unknown error code from a newer server is kept as it is.
        let future = try SignalingCodec.decode(ended(#""cause":"error","error":{"code":"quota_exceeded","message":"y"},\#(details)"#))
        guard case .callEnded(let end) = future else {
            Issue.record("not call.ended")
            return
        }
        #expect(end.error?.code == SignalingErrorCode(rawValue: "quota_exceeded"))
    }

    @Test("hello: token shape, device id, sdk, capabilities")
    func hello() throws {
        func hello(_ token: String = "a.b.c", capabilities: String = "[]", sdk: String = #"{"name":"x","version":"1"}"#) -> String {
            #"{"v":1,"type":"hello","id":"1","appKey":"k","token":"\#(token)","deviceId":"d","sdk":\#(sdk),"capabilities":\#(capabilities)}"#
        }
        _ = try SignalingCodec.decode(hello())
        let twoParts = try #require(Self.error(hello("a.b")))
        #expect(twoParts.description == #"field "token" of hello: is not a JWT: expected three non-empty base64url parts separated by '.'"#)
        #expect(Self.error(hello("a..c"))?.field == "token")
        #expect(Self.error(hello("a.b.c+"))?.reason == "character '+' at byte 5 is not allowed (allowed: A-Z a-z 0-9 - _ .)")
        let many = "[" + (0..<17).map { #""c\#($0)""# }.joined(separator: ",") + "]"
        let tooMany = try #require(Self.error(hello(capabilities: many)))
        #expect(tooMany.description == #"field "capabilities" of hello: 17 entries exceeds the limit of 16"#)
        let badCapability = try #require(Self.error(hello(capabilities: #"["audio",5]"#)))
        #expect(badCapability.field == "capabilities[1]")
        let sdk = try #require(Self.error(hello(sdk: #"{"name":"x","version":"1 0"}"#)))
        #expect(sdk.field == "sdk.version")
        let missingSDK = try #require(Self.error(#"{"v":1,"type":"hello","id":"1","appKey":"k","token":"a.b.c","deviceId":"d"}"#))
        #expect(missingSDK.description == #"field "sdk" of hello: is required"#)
    }

    @Test("hello.ok: heartbeat range and nested ICE server paths")
    func helloOK() throws {
        func ok(heartbeat: String = "25000", media: String = "{}") -> String {
            #"{"v":1,"type":"hello.ok","re":"1","sessionId":"s","userId":"u","serverVersion":"1","heartbeatMs":\#(heartbeat),"time":0,"media":\#(media)}"#
        }
        _ = try SignalingCodec.decode(ok())
        #expect(Self.error(ok(heartbeat: "999"))?.reason == "999 is out of range 1000...600000")
        let url = try #require(Self.error(ok(media: #"{"iceServers":[{"urls":["stun:a"]},{"urls":["stun:b","http://c"]}]}"#)))
        #expect(url.description == #"field "media.iceServers[1].urls[1]" of hello.ok: must be a stun:, stuns:, turn: or turns: URL"#)
        let empty = try #require(Self.error(ok(media: #"{"iceServers":[{"urls":[]}]}"#)))
        #expect(empty.description == #"field "media.iceServers[0].urls" of hello.ok: must not be empty"#)
        let notObject = try #require(Self.error(ok(media: #"{"iceServers":["stun:a"]}"#)))
        #expect(notObject.field == "media.iceServers[0]")
    }

    @Test("other messages: DTMF digits, candidates, push, SDP")
    func otherMessages() throws {
        let dtmf = try #require(Self.error(#"{"v":1,"type":"call.dtmf","id":"1","callId":"\#(Samples.callID)","digits":"12e"}"#))
        #expect(dtmf.reason == "character 'e' at byte 2 is not allowed (allowed: 0-9 * # A B C D)")
        let candidate = try #require(Self.error(#"{"v":1,"type":"ice.candidate","id":"1","callId":"\#(Samples.callID)","candidate":"a=candidate:1"}"#))
        #expect(candidate.reason == #"must start with "candidate:" (or be empty for end of candidates)"#)
        let pushType = try #require(Self.error(#"{"v":1,"type":"push.register","id":"1","pushType":"apns","token":"t","appId":"a"}"#))
        #expect(pushType.reason == #""apns" is not one of: apnsVoip, fcm"#)
        let environment = try #require(Self.error(#"{"v":1,"type":"push.register","id":"1","pushType":"fcm","token":"t","environment":"dev","appId":"a"}"#))
        #expect(environment.field == "environment")
        let sdp = try #require(Self.error(#"{"v":1,"type":"call.answer","id":"1","callId":"\#(Samples.callID)","sdp":"o=- 1 1 IN IP4 0.0.0.0\r\n"}"#))
        #expect(sdp.description == #"field "sdp" of call.answer: is not an SDP description: must start with "v=""#)
        let sdpNUL = try #require(Self.error(#"{"v":1,"type":"call.answer","id":"1","callId":"\#(Samples.callID)","sdp":"v=0\u0000"}"#))
        #expect(sdpNUL.reason == "SDP must not contain control characters other than CR, LF and tab")
        let bigSDP = "v=0\\r\\n" + String(repeating: "a", count: 32_768)
        let tooBig = try #require(Self.error(#"{"v":1,"type":"call.answer","id":"1","callId":"\#(Samples.callID)","sdp":"\#(bigSDP)"}"#))
        #expect(tooBig.code == .tooLarge)
        #expect(tooBig.description == #"field "sdp" of call.answer: 32773 bytes exceeds the limit of 32768"#)
        let errorField = try #require(Self.error(#"{"v":1,"type":"error","code":"x","message":"m","supported":[0]}"#))
        #expect(errorField.description == #"field "supported[0]" of error: 0 is out of range 1...65535"#)
    }

    @Test("validate() reports what the receiver would")
    func validateValues() {
        let bad = SignalingMessage.callStart(.init(requestID: "2", callID: Samples.callID, to: .user("bob smith"), sdp: "v=0\r\n"))
        #expect(throws: SignalingError.self) { try SignalingCodec.validate(bad) }
        let good = SignalingMessage.callStart(.init(requestID: "2", callID: Samples.callID, to: .user("bob"), sdp: "v=0\r\n"))
        #expect(throws: Never.self) { try SignalingCodec.validate(good) }
    }
}
