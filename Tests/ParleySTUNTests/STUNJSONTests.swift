import Foundation
import Testing
import ParleySTUN

/// The JSON `parley inspect` prints.
@Suite("STUN JSON form")
struct STUNJSONTests {
    static func json(_ value: some Encodable) throws -> [String: Any] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(value)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("RFC 5769 §2.2 as JSON: header, wire bytes and decoded values")
    func ipv4ResponseJSON() throws {
        let message = try STUNMessage(decoding: RFC5769.ipv4Response)
        let object = try Self.json(message)
        #expect(object["messageType"] as? String == "0x0101")
        #expect(object["class"] as? String == "success")
        #expect(object["method"] as? String == "0x001")
        #expect(object["methodName"] as? String == "binding")
        #expect(object["length"] as? Int == 60)
        #expect(object["transactionId"] as? String == "b7e7a701bc34d686fa87dfae")
        #expect((object["unknownComprehensionRequired"] as? [Any])?.isEmpty == true)
        let attributes = try #require(object["attributes"] as? [[String: Any]])
        #expect(attributes.count == 4)
        let software = attributes[0]
        #expect(software["type"] as? String == "0x8022")
        #expect(software["name"] as? String == "SOFTWARE")
        #expect(software["comprehensionRequired"] as? Bool == false)
        #expect(software["length"] as? Int == 11)
        #expect(software["value"] as? String == "7465737420766563746f72")
        #expect(software["padding"] as? String == "20")
        #expect(software["ignored"] as? Bool == false)
        #expect((software["decoded"] as? [String: Any])?["text"] as? String == "test vector")
        let address = try #require(attributes[1]["decoded"] as? [String: Any])
        #expect(address["family"] as? String == "ipv4")
        #expect(address["address"] as? String == "192.0.2.1")
        #expect(address["port"] as? Int == 32853)
        #expect((attributes[2]["decoded"] as? [String: Any])?["hmac"] as? String == "2b91f599fd9e90c38c7489f92af9ba53f06be7d7")
        #expect((attributes[3]["decoded"] as? [String: Any])?["crc32"] as? String == "c07d4c96")
    }

    @Test("RFC 5769 §2.1 as JSON: ICE attributes")
    func sampleRequestJSON() throws {
        let object = try Self.json(try STUNMessage(decoding: RFC5769.sampleRequest))
        let attributes = try #require(object["attributes"] as? [[String: Any]])
        #expect((attributes[1]["decoded"] as? [String: Any])?["priority"] as? Int == 1_845_494_271)
        #expect((attributes[2]["decoded"] as? [String: Any])?["tieBreaker"] as? String == "932ff9b151263b36")
        #expect((attributes[3]["decoded"] as? [String: Any])?["text"] as? String == "evtj:h6vY")
        #expect(attributes[3]["padding"] as? String == "202020")
    }

    @Test("Unknown and ignored attributes in JSON; the verification verdicts")
    func unknownAndIgnoredJSON() throws {
        var message = STUNMessage(class: .request, method: STUNMethod(rawValue: 0x123)!, transactionID: STUNTransactionID(bytes: RFC5769.transactionID)!)
        message.attributes.append(STUNAttribute(type: STUNAttributeType(0x0003), value: [0, 0, 0, 4]))
        message = try message.addingTrailers(integrity: [.sha1(key: .shortTerm(password: "x"))])
        message.attributes.append(STUNAttribute(type: .priority, value: [1]))
        let object = try Self.json(message)
        #expect(object["methodName"] is NSNull)
        #expect(object["method"] as? String == "0x123")
        #expect(object["unknownComprehensionRequired"] as? [String] == ["0x0003"])
        let attributes = try #require(object["attributes"] as? [[String: Any]])
        #expect(attributes[0]["name"] is NSNull)
        #expect(attributes[0]["decoded"] is NSNull)
        #expect(attributes[2]["ignored"] as? Bool == true)
        #expect(attributes[2]["decoded"] is NSNull)
        #expect(attributes[2]["decodeError"] as? String == "malformed PRIORITY: length 1, expected 4")
        #expect(attributes[1]["decodeError"] == nil)

        let verdicts = try Self.json(message.verification(key: .shortTerm(password: "x")))
        #expect(verdicts["messageIntegrity"] as? String == "valid")
        #expect(verdicts["messageIntegritySHA256"] as? String == "absent")
        #expect(verdicts["fingerprint"] as? String == "absent")
    }

    @Test("Error code and unknown-attributes JSON")
    func errorResponseJSON() throws {
        var message = STUNMessage(class: .error, method: .binding, transactionID: STUNTransactionID(bytes: RFC5769.transactionID)!)
        try message.append(.errorCode(.unknownAttribute))
        try message.append(.unknownAttributes([STUNAttributeType(0x0003)]))
        let attributes = try #require(try Self.json(message)["attributes"] as? [[String: Any]])
        let error = try #require(attributes[0]["decoded"] as? [String: Any])
        #expect(error["code"] as? Int == 420)
        #expect(error["reason"] as? String == "Unknown Attribute")
        #expect((attributes[1]["decoded"] as? [String: Any])?["types"] as? [String] == ["0x0003"])
    }
}
