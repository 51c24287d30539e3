import ParleyCallModel
import ParleyCallCore
import ParleySignaling
import Testing

/// The device adapter renders each call notification as its protocol frame.
@Suite("Device adapter")
struct DeviceAdapterTests {
    static let id = "5b8e2d90-4c1f-4a7b-9e36-d20f8a1c5e74"
    static let details = SignalingMessage.CallDetails(startedTime: 1000, answeredTime: 2000, establishedTime: 2100, endedTime: 9000)
    static let error = SignalingMessage.CallError(code: .mediaFailed, message: "caller media leg failed")

    static let table: [(CallNotification, SignalingMessage)] = [
        (.mediaReady(callID: id, sdp: "v=0\r\n"), .callMedia(.init(callID: id, sdp: "v=0\r\n"))),
        (.progress(callID: id, time: 11), .callProgress(.init(callID: id, time: 11))),
        (.ringing(callID: id, time: 12), .callRinging(.init(callID: id, time: 12))),
        (.offered(CallOffer(callID: id, from: .user("alice"), headers: ["X-A": "1"], video: true, time: 10, sdp: "v=0\r\n")),
         .callIncoming(.init(callID: id, from: .user("alice"), headers: ["X-A": "1"], video: true, time: 10, sdp: "v=0\r\n"))),
        (.answered(callID: id, time: 13), .callAnswered(.init(callID: id, time: 13))),
        (.established(callID: id, time: 14), .callEstablished(.init(callID: id, time: 14))),
        (.ended(callID: id, cause: .hungUp, error: nil, details: details),
         .callEnded(.init(callID: id, cause: .hungUp, details: details))),
        (.ended(callID: id, cause: .error, error: error, details: details),
         .callEnded(.init(callID: id, cause: .error, error: error, details: details))),
        (.talking(callID: id, talkers: [.init(callID: "0d6b9f64-1e2a-4f8c-8b37-6a5c2e1f9d08", userID: "alice"), .init(callID: id, userID: "bob")]),
         .callTalking(.init(callID: id, talking: [.init(callID: "0d6b9f64-1e2a-4f8c-8b37-6a5c2e1f9d08", userID: "alice"), .init(callID: id, userID: "bob")]))),
        (.talking(callID: id, talkers: []), .callTalking(.init(callID: id, talking: []))),
    ]

    @Test("A SIP caller's early media is nothing to a device")
    func earlyMediaHasNoFrame() {
        #expect(DeviceAdapter.frame(for: .earlyMedia(callID: Self.id, time: 1)) == nil)
    }

    @Test("Each notification becomes its frame, which a device accepts", arguments: 0..<table.count)
    func renders(row: Int) throws {
        let (notification, expected) = Self.table[row]
        let frame = try #require(DeviceAdapter.frame(for: notification))
        #expect(frame == expected)
        #expect(frame.callID == notification.callID)
        try SignalingCodec.validate(frame)
        // And it survives the wire.
        let decoded = try SignalingCodec.decode(SignalingCodec.encode(frame))
        #expect(decoded == expected)
    }
}
