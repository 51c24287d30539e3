import Testing
import ParleySIP
import ParleyTestSupport

@Suite struct SIPDigestChallengeTests {
    /// RFC 3261 §22.4's example challenge (opaque and qop as written there).
    @Test func parsesRFC3261Example() throws {
        let challenge = try SIPDigestChallenge(parsing: """
            Digest realm="biloxi.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"
            """)
        #expect(challenge.realm == "biloxi.com")
        #expect(challenge.nonce == "dcd98b7102dd2f0e8b11d0f600bfb0c093")
        #expect(challenge.opaque == "5ccc069c403ebaf9f0171e9517f40e41")
        #expect(challenge.qopOptions == [.auth, .authInt])
        #expect(challenge.algorithm == nil)
        #expect(challenge.effectiveAlgorithm == .md5)
        #expect(!challenge.stale)
        #expect(challenge.domain.isEmpty)
    }

    @Test func anyOrderCaseInsensitiveNamesAndUnknownParametersIgnored() throws {
        let challenge = try SIPDigestChallenge(parsing:
            #"digest  ALGORITHM=sha-256 ,Stale=TRUE,  NONCE = "n1", x-vendor="a, b=c", Realm="sip.parley.test",DOMAIN="sip:a.test sip:b.test", qop=auth"#)
        #expect(challenge.realm == "sip.parley.test")
        #expect(challenge.nonce == "n1")
        #expect(challenge.algorithm == .sha256)
        #expect(challenge.stale)
        #expect(challenge.domain == ["sip:a.test", "sip:b.test"])
        #expect(challenge.qopOptions == [.auth])
    }

    @Test func quotedStringEscapes() throws {
        let challenge = try SIPDigestChallenge(parsing: #"Digest realm="say \"hi\" \\ there", nonce="a\bc""#)
        #expect(challenge.realm == #"say "hi" \ there"#)
        #expect(challenge.nonce == "abc")
        let written = try challenge.serialized()
        #expect(written.contains(#"realm="say \"hi\" \\ there""#))
        #expect(try SIPDigestChallenge(parsing: written) == challenge)
    }

    @Test func foldedLinesAreWhitespace() throws {
        let challenge = try SIPDigestChallenge(parsing: "Digest realm=\"a\",\r\n nonce=\"b\"")
        #expect(challenge.nonce == "b")
    }

    @Test func roundTrips() throws {
        let challenges = [
            SIPDigestChallenge(realm: "parley.test", nonce: "abc", algorithm: .sha512_256, qopOptions: [.auth, .authInt],
                               stale: true, opaque: "op", domain: ["sip:parley.test", "sip:alt.test"]),
            SIPDigestChallenge(realm: "r", nonce: "n", algorithm: nil, qopOptions: []),
            SIPDigestChallenge(realm: "ünïcode", nonce: "n", algorithm: .other("SHA-1"), qopOptions: [.other("auth-conf")]),
            SIPDigestChallenge(realm: "", nonce: "", algorithm: .md5Sess, qopOptions: [.authInt], opaque: ""),
        ]
        for challenge in challenges {
            let written = try challenge.serialized()
            #expect(try SIPDigestChallenge(parsing: written) == challenge, "\(written)")
        }
        #expect(try challenges[0].serialized()
            == #"Digest realm="parley.test", domain="sip:parley.test sip:alt.test", nonce="abc", opaque="op", stale=true, algorithm=SHA-512-256, qop="auth,auth-int""#)
    }

    @Test func algorithmsByName() {
        for algorithm: SIPDigestAlgorithm in [.md5, .md5Sess, .sha256, .sha256Sess, .sha512_256, .sha512_256Sess] {
            #expect(SIPDigestAlgorithm(token: algorithm.token) == algorithm)
            #expect(SIPDigestAlgorithm(token: algorithm.token.uppercased()) == algorithm)
            #expect(algorithm.isSupported)
        }
        #expect(SIPDigestAlgorithm(token: "SHA-1") == .other("SHA-1"))
        #expect(!SIPDigestAlgorithm(token: "SHA-1").isSupported)
        #expect(SIPDigestAlgorithm.sha256Sess.isSession && !SIPDigestAlgorithm.sha256.isSession)
    }

    @Test func strongestSupportedChallengeIsChosen() throws {
        let values = [
            #"Digest realm="r", nonce="1", algorithm=MD5, qop="auth""#,
            #"Digest realm="r", nonce="2", algorithm=SHA-256, qop="auth""#,
            #"Digest realm="r", nonce="3", algorithm=SHA-3, qop="auth""#,
            #"Digest realm="r", nonce="4", algorithm=SHA-512-256, qop="auth-conf""#,
            #"Digest realm="r", nonce="5", algorithm=SHA-256-sess, qop="auth""#,
        ]
        let challenges = try values.map { try SIPDigestChallenge(parsing: $0) }
        // SHA-3 is unknown and SHA-512-256 offers only an unknown qop: SHA-256 wins, the
        // first of the two SHA-256 challenges on the tie.
        #expect(SIPDigestChallenge.strongest(challenges)?.nonce == "2")
        #expect(challenges[2].unanswerableReason?.kind == .unsupportedAlgorithm)
        #expect(challenges[3].unanswerableReason?.kind == .unsupportedQOP)
        #expect(SIPDigestChallenge.strongest(Array(challenges[2...3])) == nil)
        // Order does not let MD5 win when it is moved to the top.
        #expect(SIPDigestChallenge.strongest([challenges[0], challenges[1]])?.nonce == "2")
        #expect(SIPDigestChallenge.strongest([challenges[1], challenges[0]])?.nonce == "2")
    }

    @Test func sessionAlgorithmWithoutQOPCannotBeAnswered() {
        let challenge = SIPDigestChallenge(realm: "r", nonce: "n", algorithm: .md5Sess, qopOptions: [])
        #expect(challenge.unanswerableReason?.kind == .unsupportedQOP)
    }

    @Test func preferredQOP() throws {
        #expect(try SIPDigestChallenge(realm: "r", nonce: "n", qopOptions: [.authInt, .auth]).preferredQOP() == .auth)
        #expect(try SIPDigestChallenge(realm: "r", nonce: "n", qopOptions: [.authInt]).preferredQOP() == .authInt)
        #expect(try SIPDigestChallenge(realm: "r", nonce: "n", qopOptions: []).preferredQOP() == nil)
    }

    private func parseError(_ value: String) -> SIPDigestError? {
        #expect(throws: SIPDigestError.self) { try SIPDigestChallenge(parsing: value) }
    }

    @Test func malformedValuesGiveClearErrors() {
        let cases: [(String, SIPDigestError.Kind)] = [
            ("", .malformed),
            ("   ", .malformed),
            (#"Digest realm="r", nonce="unterminated"#, .malformed),
            (#"Digest realm="r" nonce="n""#, .malformed),
            (#"Digest realm="r", nonce"#, .malformed),
            (#"Digest realm="r", ="n""#, .malformed),
            (#"Digest realm="r", nonce="n","#, .malformed),
            (#"Digest realm=, nonce="n""#, .malformed),
            (#"Digest realm=sip:x, nonce="n""#, .malformed),
            (#"Digestrealm="r""#, .unsupportedScheme),
            (#"Digest"realm="r""#, .malformed),
            ("Digest realm=\"a\u{0}b\", nonce=\"n\"", .malformed),
            ("Digest realm=\"a\rb\", nonce=\"n\"", .malformed),
            ("Digest realm=\"a\", nonce=\"n\"\r\nVia: x", .malformed),
            ("Digest realm=\"a\\\r\", nonce=\"n\"", .malformed),
            (#"Digest realm="r", nonce="n\"#, .malformed),
            (#"Basic realm="r""#, .unsupportedScheme),
            (#"Digest nonce="n""#, .missingParameter),
            (#"Digest realm="r""#, .missingParameter),
            ("Digest", .missingParameter),
            (#"Digest realm="r", nonce="n", realm="evil""#, .duplicateParameter),
            (#"Digest realm="r", nonce="n", stale=maybe"#, .invalidParameter),
            (#"Digest realm="r", nonce="n", qop=" , ""#, .invalidParameter),
        ]
        for (value, kind) in cases {
            let error = parseError(value)
            #expect(error?.kind == kind, "\(value.debugDescription): \(String(describing: error))")
            #expect(error.map { !$0.description.isEmpty } ?? false)
        }
    }

    @Test func errorsSayWhere() {
        let error = parseError(#"Digest realm="r", nonce="n" opaque="o""#)
        #expect(error?.offset == 28)
        #expect(error?.description == #"malformed at byte 28: expected "," after parameter "nonce""#)
    }

    @Test func sizeLimits() {
        let long = "Digest realm=\"r\", nonce=\"" + String(repeating: "a", count: SIPDigestLimits.maxHeaderValueBytes) + "\""
        #expect(parseError(long)?.kind == .inputTooLarge)
        let many = "Digest realm=\"r\", nonce=\"n\"" + String(repeating: ", x=y", count: SIPDigestLimits.maxParameters)
        #expect(parseError(many)?.kind == .inputTooLarge)
        let justUnder = "Digest realm=\"r\", nonce=\"n\"" + String(repeating: ", x=y", count: SIPDigestLimits.maxParameters - 2)
        #expect((try? SIPDigestChallenge(parsing: justUnder)) != nil)
    }

    @Test func serializingRefusesWhatAHeaderCannotCarry() {
        let injected = SIPDigestChallenge(realm: "r\r\nVia: SIP/2.0/UDP evil", nonce: "n")
        #expect(throws: SIPDigestError.self) { try injected.serialized() }
        let badAlgorithm = SIPDigestChallenge(realm: "r", nonce: "n", algorithm: .other("MD5, qop=auth"))
        #expect(throws: SIPDigestError.self) { try badAlgorithm.serialized() }
    }

    /// Random bytes and mutations of a valid value: errors only, never a crash or a hang.
    @Test func garbageNeverCrashes() {
        var generator = SeededGenerator(seed: 10)
        let valid = Array(#"Digest realm="r", nonce="n", qop="auth,auth-int", algorithm=SHA-256, stale=false"#.utf8)
        let alphabet = Array(#" ,="\\\r\n\tDigestrealmnonceqop-"#.utf8) + [0, 0x7F, 0xC3, 0xA9]
        for _ in 0..<3000 {
            var bytes = valid
            for _ in 0..<Int(generator.next() % 6) {
                let index = Int(generator.next() % UInt64(bytes.count))
                bytes[index] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
            }
            let text = String(decoding: bytes, as: UTF8.self)
            _ = try? SIPDigestChallenge(parsing: text)
            _ = try? SIPDigestCredentials(parsing: text)
        }
    }
}
