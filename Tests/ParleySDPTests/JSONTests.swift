import Foundation
import ParleySDP
import Testing

@Suite("JSON form for parley inspect")
struct JSONTests {
    func json(_ value: some Encodable) throws -> [String: Any] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(value)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("every key is present, absent values are null")
    func stableShape() throws {
        let object = try json(try Fixture.chromiumOffer.parsed)
        #expect(Set(object.keys) == ["version", "origin", "sessionName", "information", "uri", "emails", "phones", "connection", "bandwidths", "timings", "timeZones", "encryptionKey", "attributes", "media"])
        #expect(object["information"] is NSNull)
        let media = try #require((object["media"] as? [[String: Any]])?.first)
        #expect(Set(media.keys) == ["media", "port", "portCount", "proto", "formats", "information", "connections", "bandwidths", "encryptionKey", "attributes"])
        let attributes = try #require(media["attributes"] as? [[String: Any]])
        #expect(attributes.allSatisfy { Set($0.keys) == ["name", "value", "parsed", "parseError"] })
    }

    @Test("attributes carry their parsed form")
    func parsedAttributes() throws {
        let object = try json(try Fixture.chromiumOffer.parsed)
        let media = try #require((object["media"] as? [[String: Any]])?.first)
        let attributes = try #require(media["attributes"] as? [[String: Any]])
        let rtpmap = try #require(attributes.first { $0["name"] as? String == "rtpmap" })
        let parsed = try #require(rtpmap["parsed"] as? [String: Any])
        #expect(parsed["payloadType"] as? Int == 111 && parsed["encodingName"] as? String == "opus" && parsed["channels"] as? Int == 2)
        let fingerprint = try #require(attributes.first { $0["name"] as? String == "fingerprint" }?["parsed"] as? [String: Any])
        let hex = try #require(fingerprint["bytes"] as? String)
        #expect(hex.count == 64 && hex == hex.lowercased())
        let candidate = try #require(attributes.first { $0["name"] as? String == "candidate" }?["parsed"] as? [String: Any])
        #expect(candidate["type"] as? String == "host" && candidate["addressKind"] as? String == "ipv4")
        #expect(attributes.first { $0["name"] as? String == "setup" }?["parsed"] as? String == "actpass")
        let mux = try #require(attributes.first { $0["name"] as? String == "rtcp-mux" })
        #expect(mux["value"] is NSNull && mux["parsed"] is NSNull)
    }

    @Test("a broken known attribute shows its parse error")
    func parseErrorInJSON() throws {
        let sdp = try SessionDescription(parsing: "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\na=setup:sideways\r\n")
        let attribute = try #require((try json(sdp)["attributes"] as? [[String: Any]])?.first)
        #expect(attribute["parsed"] is NSNull)
        #expect((attribute["parseError"] as? String)?.contains("sideways") == true)
    }

    @Test("negotiated audio encodes")
    func negotiatedJSON() throws {
        let answer = try AudioOfferAnswer(local: serverCapabilities()).answer(to: try Fixture.chromiumOffer.parsed)
        let object = try json(answer.audio[0])
        #expect((object["codec"] as? [String: Any])?["payloadType"] as? Int == 111)
        #expect(object["localSetup"] as? String == "active" && object["isDTLSClient"] as? Bool == true)
        #expect(object["remotePacketTime"] is NSNull)
        #expect((object["telephoneEvent"] as? [String: Any])?["payloadType"] as? Int == 110)
    }
}
