import Testing
import Foundation

/// `parley inspect stun` on the RFC 5769 sample messages, through the real executable.
@Suite struct InspectSTUNTests {
    static let password = "VOkJxbRl1RmTxUk/WvJxBt"

    func inspect(_ vector: String, _ extra: [String] = []) throws -> (ParleyProcess.Result, [String: Any]?) {
        let file = ParleyProcess.fixtures.appendingPathComponent("stun/rfc5769-\(vector).hex")
        let result = try ParleyProcess.run(["inspect", "stun", "--hex", file.path] + extra)
        return (result, try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    func attribute(_ json: [String: Any]?, named name: String) -> [String: Any]? {
        (json?["attributes"] as? [[String: Any]])?.first { $0["name"] as? String == name }
    }

    @Test(arguments: ["2.1", "2.2", "2.3"])
    func rfc5769ShortTermVectorsVerify(vector: String) throws {
        let (result, json) = try inspect(vector, ["--password", Self.password])
        #expect(result.status == 0)
        let verification = try #require(json?["verification"] as? [String: String])
        #expect(verification["messageIntegrity"] == "valid")
        #expect(verification["fingerprint"] == "valid")
    }

    @Test func rfc5769WrongPasswordIsInvalid() throws {
        let (result, json) = try inspect("2.1", ["--password", "not the password"])
        #expect(result.status == 0)
        let verification = try #require(json?["verification"] as? [String: String])
        #expect(verification["messageIntegrity"] == "invalid")
        #expect(verification["fingerprint"] == "valid")
    }

    @Test func withoutPasswordIntegrityIsUnchecked() throws {
        let (_, json) = try inspect("2.1")
        let verification = try #require(json?["verification"] as? [String: String])
        #expect(verification["messageIntegrity"] == "unchecked")
        #expect(verification["fingerprint"] == "valid")
    }

    @Test func rfc5769Section2_1Request() throws {
        let (_, json) = try inspect("2.1")
        #expect(json?["class"] as? String == "request")
        #expect(json?["methodName"] as? String == "binding")
        #expect(json?["transactionId"] as? String == "b7e7a701bc34d686fa87dfae")
        #expect((attribute(json, named: "USERNAME")?["decoded"] as? [String: Any])?["text"] as? String == "evtj:h6vY")
        #expect((attribute(json, named: "SOFTWARE")?["decoded"] as? [String: Any])?["text"] as? String == "STUN test client")
        #expect((attribute(json, named: "PRIORITY")?["decoded"] as? [String: Any])?["priority"] as? Int == 0x6e0001ff)
        #expect(attribute(json, named: "ICE-CONTROLLED") != nil)
    }

    @Test func rfc5769Section2_2IPv4Response() throws {
        let (_, json) = try inspect("2.2", ["--password", Self.password])
        let decoded = try #require(attribute(json, named: "XOR-MAPPED-ADDRESS")?["decoded"] as? [String: Any])
        #expect(decoded["address"] as? String == "192.0.2.1")
        #expect(decoded["port"] as? Int == 32853)
        #expect(json?["class"] as? String == "success")
    }

    @Test func rfc5769Section2_3IPv6Response() throws {
        let (_, json) = try inspect("2.3", ["--password", Self.password])
        let decoded = try #require(attribute(json, named: "XOR-MAPPED-ADDRESS")?["decoded"] as? [String: Any])
        #expect(decoded["address"] as? String == "2001:db8:1234:5678:11:2233:4455:6677")
        #expect(decoded["port"] as? Int == 32853)
    }

    @Test func rfc5769Section2_4LongTermParsesIntegrityUnchecked() throws {
        let (result, json) = try inspect("2.4")
        #expect(result.status == 0)
        #expect(attribute(json, named: "REALM") != nil)
        #expect(attribute(json, named: "NONCE") != nil)
        #expect((json?["verification"] as? [String: String])?["messageIntegrity"] == "unchecked")
    }

    @Test func tamperedMessageFailsFingerprint() throws {
        let file = ParleyProcess.fixtures.appendingPathComponent("stun/rfc5769-2.1.hex")
        var hex = Array(try String(contentsOf: file, encoding: .utf8).filter { $0.isHexDigit })
        // Flip a bit inside the SOFTWARE value (byte 30): integrity and fingerprint both break.
        let index = 30 * 2 + 1
        hex[index] = hex[index] == "0" ? "1" : "0"
        let result = try ParleyProcess.run(["inspect", "stun", "--hex", "--password", Self.password], stdin: Array(String(hex).utf8))
        #expect(result.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let verification = try #require(json?["verification"] as? [String: String])
        #expect(verification["messageIntegrity"] == "invalid")
        #expect(verification["fingerprint"] == "invalid")
    }

    @Test func notSTUNSaysWhereAndWhy() throws {
        let result = try ParleyProcess.run(["inspect", "stun", "--hex"], stdin: Array("0001000021124400b7e7a701bc34d686fa87dfae".utf8))
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("parley inspect: invalid stun: "))
        #expect(result.stderr.contains("cookie"))
    }
}
