import Testing
import Foundation

/// Every committed sample in Tests/Fixtures/<format>/ decodes through the real
/// executable to JSON, and cutting a sample short gives status 0 or 2, never a crash.
@Suite struct InspectFixtureTests {
    static func fixtures(_ format: String) -> [URL] {
        let directory = ParleyProcess.fixtures.appendingPathComponent(format)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let samples = ["hex", "bin", "sdp", "json"]
        return names.filter { !$0.hasPrefix(".") && samples.contains(($0 as NSString).pathExtension) }
            .sorted().map { directory.appendingPathComponent($0) }
    }

    static func arguments(for file: URL, format: String) -> [String] {
        file.pathExtension == "hex" ? ["inspect", format, "--hex", file.path] : ["inspect", format, file.path]
    }

    static func decodeJSON(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8))
    }

    @Test(arguments: ["stun", "rtp", "rtcp", "sdp", "ws", "signaling"])
    func everyFixtureDecodes(format: String) throws {
        let files = Self.fixtures(format)
        for file in files {
            let result = try ParleyProcess.run(Self.arguments(for: file, format: format))
            // Samples named invalid-* exist to show the one-line rejection.
            if file.lastPathComponent.hasPrefix("invalid-") {
                #expect(result.status == 2, "\(file.lastPathComponent) was accepted")
                #expect(result.stderr.hasPrefix("parley inspect: invalid \(format): "))
                #expect(result.stderr.split(separator: "\n").count == 1)
                continue
            }
            #expect(result.status == 0, "\(file.lastPathComponent): \(result.stderr)")
            #expect(result.stderr.isEmpty)
            #expect((try? Self.decodeJSON(result.stdout)) != nil, "\(file.lastPathComponent) printed invalid JSON")
        }
    }

    @Test(arguments: ["stun", "rtp", "rtcp", "ws"])
    func truncatedFixturesExitCleanly(format: String) throws {
        for file in Self.fixtures(format) where file.pathExtension == "hex" {
            let text = try String(contentsOf: file, encoding: .utf8)
            let bytes = Array(text.utf8).filter { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) }
            // A handful of cut points per sample keeps this test to a few seconds.
            let digits = bytes.count / 2
            for cut in Set([1, 3, digits / 3, digits / 2, digits - 1]) where cut > 0 && cut < digits {
                let prefix = Array(bytes.prefix(cut * 2))
                let result = try ParleyProcess.run(["inspect", format, "--hex"], stdin: prefix)
                #expect(result.status == 0 || result.status == 2, "\(file.lastPathComponent) cut at \(cut)")
                if result.status == 2 {
                    #expect(result.stderr.hasPrefix("parley inspect: invalid \(format): "))
                    #expect(result.stderr.split(separator: "\n").count == 1)
                }
            }
        }
    }

    @Test func signalingErrorNamesTheField() throws {
        let result = try ParleyProcess.run(["inspect", "signaling"], stdin: Array(#"{"v":1,"type":"call.start","id":"x"}"#.utf8))
        #expect(result.status == 2)
        #expect(result.stderr == "parley inspect: invalid signaling: field \"callId\" of call.start: is required\n")
    }

    @Test func rtpFieldsComeThrough() throws {
        let file = ParleyProcess.fixtures.appendingPathComponent("rtp/opus-one-byte-extension.hex")
        let result = try ParleyProcess.run(["inspect", "rtp", "--hex", file.path])
        let json = try #require(try Self.decodeJSON(result.stdout) as? [String: Any])
        #expect(json["payloadType"] as? Int == 111)
        #expect(json["sequenceNumber"] as? Int == 18971)
        #expect(json["ssrc"] as? Int == 1_328_157_084)
        let extensionJSON = try #require(json["headerExtension"] as? [String: Any])
        #expect(extensionJSON["form"] as? String == "oneByte")
    }

    @Test func telephoneEventPayloadDecodes() throws {
        let file = ParleyProcess.fixtures.appendingPathComponent("rtp/telephone-event.hex")
        let result = try ParleyProcess.run(["inspect", "rtp", "--hex", file.path, "--telephone-event", "101"])
        let json = try #require(try Self.decodeJSON(result.stdout) as? [String: Any])
        let events = try #require(json["telephoneEvents"] as? [[String: Any]])
        #expect(events.count == 1)
        #expect(events.first?["key"] as? String == "5")
        #expect(events.first?["end"] as? Bool == true)
        #expect(events.first?["duration"] as? Int == 800)
        // Another payload type leaves the payload alone.
        let other = try ParleyProcess.run(["inspect", "rtp", "--hex", file.path, "--telephone-event", "100"])
        #expect((try Self.decodeJSON(other.stdout) as? [String: Any])?["telephoneEvents"] == nil)
    }

    @Test func chromiumOfferShowsOpusCandidatesAndFingerprint() throws {
        let file = ParleyProcess.fixtures.appendingPathComponent("sdp/chromium-offer.sdp")
        let result = try ParleyProcess.run(["inspect", "sdp", file.path])
        let json = try #require(try Self.decodeJSON(result.stdout) as? [String: Any])
        let audio = try #require((json["media"] as? [[String: Any]])?.first)
        #expect(audio["media"] as? String == "audio")
        let attributes = try #require(audio["attributes"] as? [[String: Any]])
        func parsed(_ name: String) -> [[String: Any]] {
            attributes.filter { $0["name"] as? String == name }.compactMap { $0["parsed"] as? [String: Any] }
        }
        #expect(parsed("rtpmap").contains { $0["encodingName"] as? String == "opus" && $0["payloadType"] as? Int == 111 })
        #expect(parsed("candidate").contains { $0["type"] as? String == "host" && $0["transport"] as? String == "udp" })
        #expect(parsed("fingerprint").first?["algorithm"] as? String == "sha-256")
        #expect(attributes.allSatisfy { $0["parseError"] is NSNull })
    }

    @Test func sdpErrorNamesTheLine() throws {
        let sdp = "v=0\r\no=- 1 2 IN IP4 192.0.2.1\r\ns=-\r\nt=0 0\r\nm=audio 99999 UDP/TLS/RTP/SAVPF 111\r\n"
        let result = try ParleyProcess.run(["inspect", "sdp"], stdin: Array(sdp.utf8))
        #expect(result.status == 2)
        #expect(result.stderr == "parley inspect: invalid sdp: line 5: malformed m= line: port \"99999\" is not a number 0-65535\n")
    }

    @Test func rtcpCompoundListsEveryPacket() throws {
        let file = ParleyProcess.fixtures.appendingPathComponent("rtcp/chromium-sr-sdes.hex")
        let result = try ParleyProcess.run(["inspect", "rtcp", "--hex", file.path])
        let json = try #require(try Self.decodeJSON(result.stdout) as? [String: Any])
        let packets = try #require(json["packets"] as? [[String: Any]])
        #expect(packets.map { $0["type"] as? String } == ["senderReport", "sourceDescription"])
    }

    @Test func rtpGivenAnRTCPPacketSaysWhy() throws {
        let file = ParleyProcess.fixtures.appendingPathComponent("rtcp/chromium-sr-sdes.hex")
        let result = try ParleyProcess.run(["inspect", "rtp", "--hex", file.path])
        #expect(result.status == 2)
        #expect(result.stderr == "parley inspect: invalid rtp: byte 1 is 200, an RTCP packet type (RFC 5761 §4); try 'parley inspect rtcp'\n")
    }
}
