import Testing
import ParleySIP
import ParleyTestSupport

@Suite struct SIPDigestClientTests {
    private let challenge = #"Digest realm="trunk.test", nonce="n1", algorithm=SHA-256, qop="auth,auth-int", opaque="op""#

    private func recompute(_ credentials: SIPDigestCredentials, password: String = "pw", method: String = "INVITE", body: [UInt8] = []) throws -> String {
        try SIPDigestResponse.compute(
            algorithm: credentials.algorithm ?? .md5, username: credentials.username, realm: credentials.realm, password: password,
            nonce: credentials.nonce, method: method, uri: credentials.uri, qop: credentials.qop,
            nonceCount: credentials.nonceCount, cnonce: credentials.cnonce, body: body)
    }

    @Test func answersAChallengeWithQOPAuth() throws {
        var client = try SIPDigestClient(username: "alice", password: "pw")
        var random = SeededGenerator(seed: 1)
        let answers = try client.answer(challengeValues: [challenge], method: "INVITE", requestURI: "sip:+4615550101@trunk.test", using: &random)
        let credentials = try #require(answers.first)
        #expect(answers.count == 1)
        #expect(credentials.username == "alice")
        #expect(credentials.realm == "trunk.test")
        #expect(credentials.nonce == "n1")
        #expect(credentials.uri == "sip:+4615550101@trunk.test")
        #expect(credentials.algorithm == .sha256)
        #expect(credentials.qop == .auth)
        #expect(credentials.nonceCount == 1)
        #expect(credentials.opaque == "op")
        #expect(credentials.cnonce?.utf8.count == 32)
        #expect(credentials.response == (try recompute(credentials)))
        #expect(client.knownRealms == ["trunk.test"])
        // The written value reads back the same.
        #expect(try SIPDigestCredentials(parsing: credentials.serialized()) == credentials)
    }

    @Test func cnoncesComeFromTheInjectedGenerator() throws {
        var first = try SIPDigestClient(username: "alice", password: "pw")
        var second = first
        var randomA = SeededGenerator(seed: 7), randomB = SeededGenerator(seed: 7), randomC = SeededGenerator(seed: 8)
        let a = try first.answer(challengeValues: [challenge], method: "INVITE", requestURI: "sip:x@trunk.test", using: &randomA)
        let b = try second.answer(challengeValues: [challenge], method: "INVITE", requestURI: "sip:x@trunk.test", using: &randomB)
        var third = try SIPDigestClient(username: "alice", password: "pw")
        let c = try third.answer(challengeValues: [challenge], method: "INVITE", requestURI: "sip:x@trunk.test", using: &randomC)
        #expect(a == b)
        #expect(a[0].cnonce != c[0].cnonce)
    }

    @Test func authIntWhenItIsTheOnlyQOP() throws {
        var client = try SIPDigestClient(username: "alice", password: "pw")
        var random = SeededGenerator(seed: 1)
        let body = Array("v=0\r\n".utf8)
        let credentials = try client.answer(
            challengeValues: [#"Digest realm="r", nonce="n", qop="auth-int""#], method: "INVITE", requestURI: "sip:b@r", body: body, using: &random)[0]
        #expect(credentials.qop == .authInt)
        #expect(credentials.algorithm == nil)
        #expect(credentials.response == (try recompute(credentials, body: body)))
        #expect(credentials.response != (try recompute(credentials, body: [])))
    }

    /// RFC 3261 §22.4: a challenge without qop (RFC 2069) is answered without qop, nc or cnonce.
    @Test func rfc2069ChallengeWithoutQOP() throws {
        var client = try SIPDigestClient(username: "Mufasa", password: "Circle Of Life")
        var random = SeededGenerator(seed: 1)
        let credentials = try client.answer(
            challengeValues: [#"Digest realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093""#],
            method: "GET", requestURI: "/dir/index.html", using: &random)[0]
        #expect(credentials.qop == nil && credentials.nonceCount == nil && credentials.cnonce == nil)
        #expect(credentials.response == "670fd8c2df070c60b045671b8b24ff02")
        // No reuse: RFC 2069 credentials have no count, a second use would be a replay.
        #expect(try client.credentials(forRealm: "testrealm@host.com", method: "GET", requestURI: "/", using: &random) == nil)
    }

    @Test func strongestChallengeOfEachRealm() throws {
        var client = try SIPDigestClient(username: "alice", password: "pw")
        var random = SeededGenerator(seed: 1)
        let answers = try client.answer(challengeValues: [
            #"Digest realm="proxy", nonce="p1", algorithm=MD5, qop="auth""#,
            #"Basic realm="proxy""#,
            #"Digest realm="proxy", nonce="p2", algorithm=SHA-512-256, qop="auth""#,
            #"Digest realm="registrar", nonce="r1", algorithm=SHA-1, qop="auth""#,
            #"Digest realm="registrar", nonce="r2", qop="auth""#,
            #"Digest realm=broken"#,
        ], method: "REGISTER", requestURI: "sip:trunk.test", using: &random)
        #expect(answers.map(\.realm) == ["proxy", "registrar"])
        #expect(answers.map(\.nonce) == ["p2", "r2"])
        #expect(answers[0].algorithm == .sha512_256)
        #expect(try answers.allSatisfy { try $0.response == recompute($0, method: "REGISTER") })
    }

    @Test func nothingUsable() throws {
        var client = try SIPDigestClient(username: "alice", password: "pw")
        var random = SeededGenerator(seed: 1)
        let none = #expect(throws: SIPDigestError.self) {
            try client.answer(challengeValues: [#"Basic realm="x""#, "Digest nonce=\"n\""], method: "INVITE", requestURI: "sip:b@r", using: &random)
        }
        #expect(none?.kind == .noUsableChallenge)
        let unknown = #expect(throws: SIPDigestError.self) {
            try client.answer(challengeValues: [#"Digest realm="r", nonce="n", algorithm=SHA3-512"#], method: "INVITE", requestURI: "sip:b@r", using: &random)
        }
        #expect(unknown?.kind == .noUsableChallenge)
        #expect(unknown?.reason.contains("SHA3-512") == true)
        let tooMany = #expect(throws: SIPDigestError.self) {
            try client.answer(challengeValues: Array(repeating: challenge, count: SIPDigestLimits.maxHeaderValues + 1),
                              method: "INVITE", requestURI: "sip:b@r", using: &random)
        }
        #expect(tooMany?.kind == .inputTooLarge)
        #expect(client.knownRealms.isEmpty)
    }

    @Test func reusesTheNonceWithIncreasingCounts() throws {
        var client = try SIPDigestClient(username: "alice", password: "pw")
        var random = SeededGenerator(seed: 1)
        _ = try client.answer(challengeValues: [challenge], method: "REGISTER", requestURI: "sip:trunk.test", using: &random)
        let second = try #require(try client.credentials(forRealm: "trunk.test", method: "INVITE", requestURI: "sip:b@trunk.test", using: &random))
        let third = try #require(try client.credentials(forRealm: "trunk.test", method: "BYE", requestURI: "sip:b@10.0.0.1", using: &random))
        #expect(second.nonceCount == 2 && third.nonceCount == 3)
        #expect(second.nonce == "n1" && third.nonce == "n1")
        #expect(second.cnonce != third.cnonce)
        #expect(third.response == (try recompute(third, method: "BYE")))
        #expect(try client.credentials(forRealm: "elsewhere", method: "INVITE", requestURI: "sip:b@x", using: &random) == nil)
        // A new nonce starts counting again at 1.
        let fresh = try client.answer(challengeValues: [#"Digest realm="trunk.test", nonce="n2", qop="auth""#],
                                      method: "INVITE", requestURI: "sip:b@trunk.test", using: &random)
        #expect(fresh[0].nonceCount == 1)
    }

    /// A server that challenges again with the nonce we already counted on: counting goes on.
    @Test func sameNonceKeepsCounting() throws {
        var client = try SIPDigestClient(username: "alice", password: "pw")
        var random = SeededGenerator(seed: 1)
        _ = try client.answer(challengeValues: [challenge], method: "REGISTER", requestURI: "sip:trunk.test", using: &random)
        let reused = try #require(try client.credentials(forRealm: "trunk.test", method: "REGISTER", requestURI: "sip:trunk.test", using: &random))
        let again = try client.answer(challengeValues: [challenge + ", stale=true"], method: "REGISTER", requestURI: "sip:trunk.test",
                                      previous: [reused], using: &random)
        #expect(again[0].nonceCount == 3)
    }

    @Test func staleChallengeIsAnsweredWithTheSamePassword() throws {
        var client = try SIPDigestClient(username: "alice", password: "pw")
        var random = SeededGenerator(seed: 1)
        let first = try client.answer(challengeValues: [challenge], method: "INVITE", requestURI: "sip:b@trunk.test", using: &random)
        let stale = #"Digest realm="trunk.test", nonce="n2", algorithm=SHA-256, qop="auth", stale=TRUE"#
        let second = try client.answer(challengeValues: [stale], method: "INVITE", requestURI: "sip:b@trunk.test", previous: first, using: &random)
        #expect(second[0].nonce == "n2" && second[0].nonceCount == 1)
        #expect(second[0].response == (try recompute(second[0])))
    }

    @Test func refusedPasswordStopsInsteadOfLooping() throws {
        var client = try SIPDigestClient(username: "alice", password: "wrong")
        var random = SeededGenerator(seed: 1)
        let first = try client.answer(challengeValues: [challenge], method: "INVITE", requestURI: "sip:b@trunk.test", using: &random)
        let again = #"Digest realm="trunk.test", nonce="n2", algorithm=SHA-256, qop="auth""#
        let refused = #expect(throws: SIPDigestError.self) {
            try client.answer(challengeValues: [again], method: "INVITE", requestURI: "sip:b@trunk.test", previous: first, using: &random)
        }
        #expect(refused?.kind == .credentialsRefused)
        // The same without qop (RFC 2069): no nc to tell answers apart, still refused.
        var old = try SIPDigestClient(username: "alice", password: "wrong")
        let plain = try old.answer(challengeValues: [#"Digest realm="r", nonce="a""#], method: "INVITE", requestURI: "sip:b@r", using: &random)
        #expect(throws: SIPDigestError.self) {
            try old.answer(challengeValues: [#"Digest realm="r", nonce="b""#], method: "INVITE", requestURI: "sip:b@r", previous: plain, using: &random)
        }
    }

    /// Reused (pre-emptive) credentials refused without stale: the nonce may be one the
    /// server forgot, so one fresh answer is tried; a refusal of that one is final.
    @Test func refusedReuseGetsOneFreshAnswer() throws {
        var client = try SIPDigestClient(username: "alice", password: "pw")
        var random = SeededGenerator(seed: 1)
        _ = try client.answer(challengeValues: [challenge], method: "REGISTER", requestURI: "sip:trunk.test", using: &random)
        let reused = try #require(try client.credentials(forRealm: "trunk.test", method: "REGISTER", requestURI: "sip:trunk.test", using: &random))
        let next = #"Digest realm="trunk.test", nonce="n2", qop="auth""#
        let fresh = try client.answer(challengeValues: [next], method: "REGISTER", requestURI: "sip:trunk.test", previous: [reused], using: &random)
        #expect(fresh[0].nonce == "n2")
        #expect(throws: SIPDigestError.self) {
            try client.answer(challengeValues: [#"Digest realm="trunk.test", nonce="n3", qop="auth""#],
                              method: "REGISTER", requestURI: "sip:trunk.test", previous: fresh, using: &random)
        }
    }

    @Test func serverThatIsAlwaysStaleIsGivenUpOn() throws {
        var client = try SIPDigestClient(username: "alice", password: "pw")
        var random = SeededGenerator(seed: 1)
        var previous = try client.answer(challengeValues: [challenge], method: "INVITE", requestURI: "sip:b@trunk.test", using: &random)
        for round in 1...SIPDigestLimits.maxStaleRetries {
            previous = try client.answer(challengeValues: [#"Digest realm="trunk.test", nonce="s\#(round)", qop="auth", stale=true"#],
                                         method: "INVITE", requestURI: "sip:b@trunk.test", previous: previous, using: &random)
        }
        let exhausted = #expect(throws: SIPDigestError.self) {
            try client.answer(challengeValues: [#"Digest realm="trunk.test", nonce="last", qop="auth", stale=true"#],
                              method: "INVITE", requestURI: "sip:b@trunk.test", previous: previous, using: &random)
        }
        #expect(exhausted?.kind == .staleRetriesExhausted)
        // A new request (no previous credentials) starts over.
        #expect(throws: Never.self) {
            try client.answer(challengeValues: [challenge], method: "INVITE", requestURI: "sip:b@trunk.test", using: &random)
        }
    }

    @Test func remembersABoundedNumberOfRealms() throws {
        var client = try SIPDigestClient(username: "alice", password: "pw")
        var random = SeededGenerator(seed: 1)
        for index in 0..<(SIPDigestLimits.maxRealms + 3) {
            _ = try client.answer(challengeValues: [#"Digest realm="r\#(index)", nonce="n", qop="auth""#],
                                  method: "INVITE", requestURI: "sip:b@x", using: &random)
        }
        #expect(client.knownRealms.count == SIPDigestLimits.maxRealms)
        #expect(client.knownRealms.first == "r3")
        client.forget(realm: "r5")
        #expect(!client.knownRealms.contains("r5"))
    }

    @Test func badInputIsRefused() throws {
        #expect(throws: SIPDigestError.self) { try SIPDigestClient(username: "", password: "pw") }
        #expect(throws: SIPDigestError.self) { try SIPDigestClient(username: "a\r\nb", password: "pw") }
        var client = try SIPDigestClient(username: "alice", password: "pw")
        var random = SeededGenerator(seed: 1)
        for (method, uri) in [("IN VITE", "sip:b@r"), ("", "sip:b@r"), ("INVITE", "sip:b@r x"), ("INVITE", "sip:b@r\r\n"), ("INVITE", "")] {
            let error = #expect(throws: SIPDigestError.self) {
                try client.answer(challengeValues: [challenge], method: method, requestURI: uri, using: &random)
            }
            #expect(error?.kind == .invalidParameter)
        }
    }

    @Test func descriptionHidesThePassword() throws {
        let client = try SIPDigestClient(username: "alice", password: "hunter2")
        #expect(!String(describing: client).contains("hunter2"))
        #expect(!String(reflecting: client).contains("hunter2"))
        var dumped = ""
        dump(client, to: &dumped)
        #expect(!dumped.contains("hunter2"))
        #expect(dumped.contains("alice"))
    }
}
