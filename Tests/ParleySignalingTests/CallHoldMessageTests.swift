import ParleySignaling
import Testing

/// `call.hold` (device to server) and `call.held` (server to device): their wire forms and
/// what is refused.
@Suite("call.hold request and call.held event")
struct CallHoldMessageTests {
    static let callID = Samples.callID
    static let request = #"{"v":1,"type":"call.hold","id":"18","callId":"\#(callID)","held":true}"#
    static let event = #"{"v":1,"type":"call.held","callId":"\#(callID)","held":false,"by":"callee","time":1764421208000}"#

    static func error(_ text: String, sender: SignalingMessageType.Direction? = nil) -> SignalingError? {
        signalingError { () throws(SignalingError) in try SignalingCodec.decode(text, sender: sender) }
    }

    @Test("call.hold: id, callId, held; answered by result")
    func requestWireForm() throws {
        let message = SignalingMessage.callHold(.init(requestID: "18", callID: Self.callID, held: true))
        #expect(SignalingCodec.encodeToString(message) == Self.request)
        #expect(try SignalingCodec.decode(Self.request) == message)
        #expect(message.type == .callHold && message.direction == .deviceToServer)
        #expect(message.requestID == "18" && message.callID == Self.callID)
        try SignalingCodec.validate(message)
    }

    @Test("call.held: callId, held, by, time; no id")
    func eventWireForm() throws {
        let message = SignalingMessage.callHeld(.init(callID: Self.callID, held: false, by: .callee, time: 1_764_421_208_000))
        #expect(SignalingCodec.encodeToString(message) == Self.event)
        #expect(try SignalingCodec.decode(Self.event) == message)
        #expect(message.type == .callHeld && message.direction == .serverToDevice)
        #expect(message.requestID == nil && message.callID == Self.callID)
    }

    @Test("call.hold refuses a missing or non-boolean held, a bad callId, a missing id", arguments: [
        (#"{"v":1,"type":"call.hold","id":"1","callId":"\#(callID)"}"#, "held", "is required"),
        (#"{"v":1,"type":"call.hold","id":"1","callId":"\#(callID)","held":"true"}"#, "held", "expected true or false, found string"),
        (#"{"v":1,"type":"call.hold","id":"1","callId":"\#(callID)","held":null}"#, "held", nil),
        (#"{"v":1,"type":"call.hold","id":"1","callId":"c-1","held":true}"#, "callId", nil),
        (#"{"v":1,"type":"call.hold","callId":"\#(callID)","held":true}"#, "id", nil),
    ] as [(String, String, String?)])
    func badRequests(frame: String, field: String, reason: String?) throws {
        let error = try #require(Self.error(frame), "\(frame)")
        #expect(error.code == .badRequest && error.field == field, "\(error)")
        if let reason { #expect(error.reason == reason, "\(error)") }
    }

    @Test("call.held refuses an unknown holder and a missing time")
    func badEvents() throws {
        let holder = try #require(Self.error(#"{"v":1,"type":"call.held","callId":"\#(Self.callID)","held":true,"by":"both","time":1}"#))
        #expect(holder.code == .badRequest && holder.field == "by", "\(holder)")
        let time = try #require(Self.error(#"{"v":1,"type":"call.held","callId":"\#(Self.callID)","held":true,"by":"caller"}"#))
        #expect(time.code == .badRequest && time.field == "time", "\(time)")
    }

    @Test("Each side sends only its own: a server's call.hold and a device's call.held are unknown types")
    func directions() throws {
        #expect(SignalingMessageType.callHold.isSent(by: .deviceToServer) && !SignalingMessageType.callHold.isSent(by: .serverToDevice))
        #expect(SignalingMessageType.callHeld.isSent(by: .serverToDevice) && !SignalingMessageType.callHeld.isSent(by: .deviceToServer))
        let fromDevice = try #require(Self.error(Self.event, sender: .deviceToServer))
        #expect(fromDevice.code == .unknownType, "\(fromDevice)")
        let fromServer = try #require(Self.error(Self.request, sender: .serverToDevice))
        #expect(fromServer.code == .unknownType, "\(fromServer)")
    }
}
