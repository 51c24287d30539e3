import Foundation
import ParleySignaling
import Testing

/// The Codable form is the wire form, through Foundation's encoder and decoder.
@Suite("Codable")
struct CodableTests {
    @Test("JSONEncoder output decodes with SignalingCodec, and JSONDecoder reads codec frames", arguments: Samples.messages)
    func foundationRoundTrip(message: SignalingMessage) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let data = try encoder.encode(message)
        #expect(try SignalingCodec.decode(Array(data)) == message)
        let decoded = try JSONDecoder().decode(SignalingMessage.self, from: Data(SignalingCodec.encode(message)))
        #expect(decoded == message)
    }

    @Test("the JSON form has the wire names")
    func wireNames() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let ended = SignalingMessage.callEnded(.init(callID: Samples.callID, cause: .noAnswer, details: .init(startedTime: 1, endedTime: 2)))
        let text = String(decoding: try encoder.encode(ended), as: UTF8.self)
        #expect(text == #"{"callId":"6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13","cause":"noAnswer","details":{"endedTime":2,"startedTime":1},"type":"call.ended","v":1}"#)
    }

    @Test("decoding through JSONDecoder validates and throws SignalingError")
    func decoderValidates() throws {
        let text = #"{"v":1,"type":"call.start","id":"2","callId":"nope","to":{"kind":"user","address":"bob"},"sdp":"v=0\r\n"}"#
        do {
            _ = try JSONDecoder().decode(SignalingMessage.self, from: Data(text.utf8))
            Issue.record("decoded an invalid call id")
        } catch let error as SignalingError {
            #expect(error.field == "callId")
            #expect(error.code == .badRequest)
        }
        let wrongVersion = #"{"v":3,"type":"ping","id":"1"}"#
        #expect(throws: SignalingError.self) { try JSONDecoder().decode(SignalingMessage.self, from: Data(wrongVersion.utf8)) }
    }

    @Test("Foundation's JSONDecoder on deep nesting: throws, does not crash (documented behaviour)")
    func foundationDeepNesting() {
        let deep = Data(String(repeating: "[", count: 100_000).utf8)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(SignalingMessage.self, from: deep) }
        let deepMember = Data((#"{"v":1,"type":"ping","id":"1","x":"# + String(repeating: "[", count: 100_000)).utf8)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(SignalingMessage.self, from: deepMember) }
    }

    @Test("error codes and enums encode as their strings")
    func smallTypes() throws {
        let data = try JSONEncoder().encode([SignalingErrorCode.destinationNotFound])
        #expect(String(decoding: data, as: UTF8.self) == #"["destination_not_found"]"#)
        #expect(try JSONDecoder().decode([SignalingMessage.EndCause].self, from: Data(#"["otherDeviceAnswered"]"#.utf8)) == [.otherDeviceAnswered])
    }
}
