import ParleySignaling
import Testing

/// The envelope: version, type, direction, forward compatibility, error replies.
@Suite("Envelope")
struct EnvelopeTests {
    static func error(_ text: String, sender: SignalingMessageType.Direction? = nil) -> SignalingError? {
        signalingError { () throws(SignalingError) in try SignalingCodec.decode(text, sender: sender) }
    }

    @Test("unknown type: unknown_type, with the request id for re")
    func unknownType() throws {
        let error = try #require(Self.error(#"{"v":1,"type":"call.transfer","id":"9","callId":"x"}"#))
        #expect(error.code == .unknownType)
        #expect(error.requestID == "9")
        #expect(error.field == "type")
        #expect(error.messageType == nil)
        #expect(error.description == #"unknown message type "call.transfer""#)
        let reply = SignalingCodec.errorReply(for: error)
        #expect(SignalingCodec.encodeToString(reply) == #"{"v":1,"type":"error","re":"9","code":"unknown_type","message":"unknown message type \"call.transfer\"","field":"type"}"#)
    }

    @Test("a type from the wrong direction is unknown_type when the direction is enforced")
    func wrongDirection() throws {
        let incoming = SignalingCodec.encodeToString(Samples.messages.first { $0.type == .callIncoming }!)
        let error = try #require(Self.error(incoming, sender: .deviceToServer))
        #expect(error.code == .unknownType)
        #expect(error.description == "message type call.incoming is only sent by the server")
        let ping = #"{"v":1,"type":"ping","id":"1"}"#
        #expect(Self.error(ping, sender: .serverToDevice)?.description == "message type ping is only sent by devices")
        #expect(Self.error(ping, sender: .deviceToServer) == nil)
        #expect(Self.error(ping) == nil)
    }

    @Test("other versions: unsupported_version listing the supported ones")
    func unsupportedVersion() throws {
        for version in ["2", "0", "65536"] {
            let error = try #require(Self.error(#"{"v":\#(version),"type":"ping","id":"5"}"#))
            #expect(error.code == .unsupportedVersion)
            #expect(error.supportedVersions == [1])
            #expect(error.requestID == "5")
            #expect(error.field == "v")
        }
        let error = try #require(Self.error(#"{"v":2,"type":"call.transfer","id":"5"}"#))
        #expect(error.description == #"field "v": version 2 is not supported (supported: 1)"#)
        let reply = SignalingCodec.errorReply(for: error)
        #expect(SignalingCodec.encodeToString(reply) == #"{"v":1,"type":"error","re":"5","code":"unsupported_version","message":"field \"v\": version 2 is not supported (supported: 1)","field":"v","supported":[1]}"#)
    }

    @Test("v missing or not an integer: bad_request")
    func badVersion() throws {
        let cases: [(String, String)] = [
            (#"{"type":"ping","id":"1"}"#, #"field "v": is required"#),
            (#"{"v":null,"type":"ping","id":"1"}"#, #"field "v": is required"#),
            (#"{"v":"1","type":"ping","id":"1"}"#, #"field "v": expected an integer, found string"#),
            (#"{"v":1.0,"type":"ping","id":"1"}"#, #"field "v": expected an integer, found 1.0"#),
            (#"{"v":-1,"type":"ping","id":"1"}"#, #"field "v": -1 is out of range 0...2147483647"#),
            (#"{"v":1e400,"type":"ping","id":"1"}"#, #"field "v": expected an integer, found 1e400"#),
            (#"{"v":[1],"type":"ping","id":"1"}"#, #"field "v": expected an integer, found array"#),
        ]
        for (text, description) in cases {
            let error = try #require(Self.error(text))
            #expect(error.code == .badRequest)
            #expect(error.description == description)
            #expect(error.requestID == "1")
        }
    }

    @Test("type missing or not a string: bad_request")
    func badType() throws {
        #expect(Self.error(#"{"v":1,"id":"1"}"#)?.description == #"field "type": is required"#)
        #expect(Self.error(#"{"v":1,"type":7,"id":"1"}"#)?.description == #"field "type": expected a string, found number"#)
        #expect(Self.error(#"{"v":1,"type":"PING","id":"1"}"#)?.code == .unknownType)
    }

    @Test("unknown members are ignored, whatever they hold")
    func unknownMembersIgnored() throws {
        let text = #"{"v":1,"type":"ping","id":"1","re":"x","future":{"a":[1.5e300,-0.0,true,null,"\u00e9",{}]},"n":123456789012345678901234567890}"#
        #expect(try SignalingCodec.decode(text) == .ping(.init(requestID: "1")))
        let nested = #"{"v":1,"type":"call.ended","callId":"\#(Samples.callID)","cause":"canceled","details":{"startedTime":1,"endedTime":2,"ringTimeMs":5,"legs":[{}]},"reason":{"sip":487}}"#
        #expect(try SignalingCodec.decode(nested) == .callEnded(.init(callID: Samples.callID, cause: .canceled, details: .init(startedTime: 1, endedTime: 2))))
    }

    @Test("checks run in the documented order")
    func checkOrder() throws {
        // Size before syntax.
        let big = Array(#"{"v":1,"type":"ping","id":"1","pad":""#.utf8) + [UInt8](repeating: 0xFF, count: 100)
        #expect(signalingError { () throws(SignalingError) in try SignalingCodec.decode(big, maxFrameSize: 64) }?.code == .tooLarge)
        // Syntax before version.
        #expect(Self.error(#"{"v":2,"type":"ping","id":"1",}"#)?.code == .malformed)
        // Version before type.
        #expect(Self.error(#"{"v":2,"type":"nope","id":"1"}"#)?.code == .unsupportedVersion)
        // Type before members.
        #expect(Self.error(#"{"v":1,"type":"nope"}"#)?.code == .unknownType)
    }

    @Test("the error reply for a malformed frame has no re")
    func malformedReply() throws {
        let error = try #require(Self.error(#"{"v":1,"id":"4","type",}"#))
        #expect(error.code == .malformed)
        #expect(error.requestID == nil)
        let reply = SignalingCodec.errorReply(for: error)
        #expect(reply.replyTo == nil)
        guard case .error(let body) = reply else {
            Issue.record("not an error")
            return
        }
        #expect(body.message == error.description)
        try SignalingCodec.validate(reply)
    }

    @Test("the documented malformed example")
    func documentedMalformedExample() throws {
        let error = try #require(Self.error(#"{"v":1,"id":"42","type","x":1}"#))
        #expect(error.description == "malformed JSON at offset 23: expected ':' after an object key, found ','")
        let documented = try #require(Self.error(#"{"v":1,"ab":2,"c",}"#))
        #expect(documented.description == "malformed JSON at offset 17: expected ':' after an object key, found ','")
    }

    @Test("constants of version 1")
    func constants() {
        #expect(SignalingCodec.version == 1)
        #expect(SignalingCodec.supportedVersions == [1])
        #expect(SignalingCodec.subprotocol == "parley.v1")
        #expect(SignalingCodec.path == "/v1/ws")
        #expect(SignalingLimits.defaultMaxFrameSize == 65_536)
        #expect(SignalingLimits.maxHeadersBytes == 1024)
    }
}
