import ParleySDP
import Testing
import ParleyTestSupport

@Suite("Hostile input")
struct HostileInputTests {
    /// Parses, and when that succeeds also exercises every typed accessor and the
    /// answer builder, which must throw `SDPError` or return, never trap.
    static func exercise(_ bytes: [UInt8], limits: SDPLimits = .default) -> SessionDescription? {
        guard let sdp = try? SessionDescription(parsing: bytes, limits: limits) else { return nil }
        _ = try? sdp.groups()
        _ = try? sdp.fingerprints()
        for media in sdp.media {
            _ = try? media.rtpMaps()
            _ = try? media.formatParameters()
            _ = try? media.rtcpFeedback()
            _ = try? media.iceCandidates()
            _ = try? media.extensionMaps()
            _ = try? media.ssrcAttributes()
            _ = try? media.rtcp()
            _ = try? media.packetTime()
        }
        _ = try? AudioOfferAnswer(local: serverCapabilities()).answer(to: sdp)
        return sdp
    }

    /// Parses one prefix: it must either throw a located `SDPError` or give a value
    /// that round-trips.
    static func checkPrefix(_ prefix: [UInt8]) throws -> Bool {
        do {
            let sdp = try SessionDescription(parsing: prefix)
            #expect(try SessionDescription(parsing: sdp.serialized()) == sdp)
            return true
        } catch {
            #expect(error.line != nil || error.kind == .missingLine, "\(prefix.count): \(error)")
            return false
        }
    }

    @Test("every truncation of the Chromium offer, at line boundaries and mid-line, parses or throws SDPError")
    func chromiumTruncations() throws {
        let bytes = try Fixture.chromiumOffer.bytes
        var parsed = 0
        for length in 0..<bytes.count {
            let prefix = Array(bytes[0..<length])
            if try Self.checkPrefix(prefix) { parsed += 1 }
            // The typed accessors and the answer builder get every line boundary
            // (inside a line they see the same attributes as the boundary before).
            if length == 0 || bytes[length - 1] == UInt8(ascii: "\n") { _ = Self.exercise(prefix) }
        }
        #expect(parsed > 0)
    }

    @Test("truncations of the other fixtures: every line boundary and every 7th byte", arguments: [Fixture.firefoxOffer, .aiortcOffer, .chromiumAnswerToAiortc])
    func otherTruncations(_ fixture: Fixture) throws {
        let bytes = try fixture.bytes
        for length in 0..<bytes.count where length % 7 == 0 || bytes[length - 1] == UInt8(ascii: "\n") {
            let prefix = Array(bytes[0..<length])
            _ = try Self.checkPrefix(prefix)
            if length == 0 || bytes[length - 1] == UInt8(ascii: "\n") { _ = Self.exercise(prefix) }
        }
    }

    @Test("10,000 random byte strings and 500 mutated fixtures never trap")
    func randomInput() throws {
        var rng = SeededGenerator(seed: 0x5D9)
        for _ in 0..<10_000 {
            let count = Int.random(in: 0..<200, using: &rng)
            _ = Self.exercise((0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) })
        }
        let seeds = try Fixture.allCases.map { try $0.bytes }
        let alphabet = Array("v=o-s t0 9:/\r\na=candidate:1 typ host raddr rport fingerprint sha-256 AB: rtpmap opus/48000/2 m=audio".utf8)
        for index in 0..<500 {
            var bytes = seeds[index % seeds.count]
            for _ in 0..<Int.random(in: 1...8, using: &rng) {
                let position = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: bytes[position] = UInt8.random(in: 0...255, using: &rng)
                case 1: bytes[position] = alphabet[Int.random(in: 0..<alphabet.count, using: &rng)]
                case 2: bytes.remove(at: position)
                default: bytes.insert(alphabet[Int.random(in: 0..<alphabet.count, using: &rng)], at: position)
                }
                if bytes.isEmpty { break }
            }
            if let sdp = Self.exercise(bytes) {
                #expect(try SessionDescription(parsing: sdp.serialized()) == sdp)
            }
        }
    }

    @Test("limits: total size, line count, media sections")
    func limits() throws {
        let head = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n"
        // One huge line past the byte limit.
        let huge = head + "a=x:" + String(repeating: "y", count: 70_000) + "\r\n"
        do { _ = try SessionDescription(parsing: huge); Issue.record("accepted") } catch { #expect(error.kind == .inputTooLarge && error.line == nil) }
        // A huge line within a raised limit is fine.
        let raised = SDPLimits(maxBytes: 1 << 20)
        #expect(try SessionDescription(parsing: huge, limits: raised).attributes[0].value?.count == 70_000)
        // Thousands of attributes within the limits parse and round-trip.
        let many = head + "m=audio 9 RTP/AVP 0\r\n" + String(repeating: "a=rtcp-fb:* nack\r\n", count: 3000)
        let sdp = try SessionDescription(parsing: many)
        #expect(sdp.media[0].attributes.count == 3000)
        #expect(try sdp.media[0].rtcpFeedback().count == 3000)
        #expect(sdp.serialized() == many)
        // Too many lines.
        let tooMany = head + String(repeating: "a=x\r\n", count: 9000)
        do { _ = try SessionDescription(parsing: tooMany); Issue.record("accepted") } catch { #expect(error.kind == .tooManyLines && error.line == 8193) }
        // Too many media sections.
        let sections = head + String(repeating: "m=audio 0 RTP/AVP 0\r\n", count: 300)
        do { _ = try SessionDescription(parsing: sections); Issue.record("accepted") } catch { #expect(error.kind == .tooManyMediaSections && error.line == 4 + 257) }
        #expect(try SessionDescription(parsing: sections, limits: SDPLimits(maxMediaSections: 300)).media.count == 300)
    }

    @Test("absurd numbers are errors, not overflows")
    func absurdNumbers() {
        let head = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\n"
        for line in ["t=99999999999999999999999 0", "m=audio 9/99999 RTP/AVP 0", "b=AS:18446744073709551616", "m=audio -1 RTP/AVP 0"] {
            #expect(throws: SDPError.self) { try SessionDescription(parsing: head + line + "\r\n") }
        }
        #expect(throws: SDPError.self) { try ICECandidate(attributeValue: "1 1 udp 99999999999999999999 1.2.3.4 1 typ host") }
        #expect(throws: SDPError.self) { try SSRCAttribute(attributeValue: "4294967296 cname:x") }
        #expect(throws: SDPError.self) { try PacketTime(attributeValue: String(repeating: "9", count: 400)) }
    }

    /// Regression inputs found by fuzzing or review go here.
    @Test("regressions")
    func regressions() {
        for text in ["v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nr=1\r\n", "v=0\n\n\n", "\r\n", "\n", "v=", "=0"] {
            _ = Self.exercise(Array(text.utf8))
        }
    }
}
