import Testing
import ParleySIP
import ParleyTestSupport

@Suite struct SIPDigestServerTests {
    private let secret = [UInt8](repeating: 0x5A, count: 32)
    private let uri = "sip:+4615550101@parley.test"
    private let start: Int64 = 1_750_000_000

    private func makeServer(_ configuration: SIPDigestServer.Configuration = .init(realm: "parley.test")) throws -> SIPDigestServer {
        try SIPDigestServer(configuration: configuration, secret: secret)
    }

    private func password(_ username: String) -> String? {
        ["alice": "wonderland", "bob": "builder"][username]
    }

    /// The client's answer to a fresh challenge of `server` issued at `now`.
    private func answer(
        _ server: SIPDigestServer, at now: Int64, client: inout SIPDigestClient, random: inout SeededGenerator,
        method: String = "INVITE", requestURI: String? = nil, body: [UInt8] = [], stale: Bool = false,
        previous: [SIPDigestCredentials] = []
    ) throws -> SIPDigestCredentials {
        let values = try server.challengeValues(stale: stale, nowUnixSeconds: now, using: &random)
        return try client.answer(challengeValues: values, method: method, requestURI: requestURI ?? uri, body: body,
                                 previous: previous, using: &random)[0]
    }

    private func verify(
        _ server: inout SIPDigestServer, _ credentials: SIPDigestCredentials, at now: Int64,
        method: String = "INVITE", requestURI: String? = nil, body: [UInt8] = []
    ) throws -> SIPDigestServer.Verdict {
        server.verify(authorizationValues: [try credentials.serialized()], method: method, requestURI: requestURI ?? uri,
                      body: body, nowUnixSeconds: now, password: password)
    }

    @Test func challengesOnePerAlgorithmSharingANonce() throws {
        let server = try makeServer()
        var random = SeededGenerator(seed: 3)
        let challenges = try server.challenges(nowUnixSeconds: start, using: &random)
        #expect(challenges.map(\.algorithm) == [.sha256, .md5])
        #expect(challenges.allSatisfy { $0.realm == "parley.test" && $0.qopOptions == [.auth] && !$0.stale })
        #expect(Set(challenges.map(\.nonce)).count == 1)
        #expect(challenges[0].nonce.utf8.count == 64)
        let values = try server.challengeValues(stale: true, nowUnixSeconds: start, using: &random)
        #expect(try values.map { try SIPDigestChallenge(parsing: $0).stale } == [true, true])
        // Every challenge gets its own nonce, even within one second.
        #expect(try server.challenges(nowUnixSeconds: start, using: &random)[0].nonce != challenges[0].nonce)
    }

    @Test func acceptsTheRightPasswordOnceAndRefusesTheReplay() throws {
        var server = try makeServer()
        var client = try SIPDigestClient(username: "alice", password: "wonderland")
        var random = SeededGenerator(seed: 3)
        let credentials = try answer(server, at: start, client: &client, random: &random)
        #expect(credentials.algorithm == .sha256)
        #expect(try verify(&server, credentials, at: start + 1) == .accepted(username: "alice"))
        #expect(try verify(&server, credentials, at: start + 2) == .forbidden(.replayedNonceCount(1)))
        // The next count of the same nonce is fine.
        let next = try #require(try client.credentials(forRealm: "parley.test", method: "BYE", requestURI: uri, using: &random))
        #expect(try verify(&server, next, at: start + 3, method: "BYE") == .accepted(username: "alice"))
        #expect(server.trackedNonceCount == 1)
    }

    @Test func countsOutOfOrderWithinTheWindow() throws {
        var server = try makeServer()
        var client = try SIPDigestClient(username: "alice", password: "wonderland")
        var random = SeededGenerator(seed: 3)
        var sent = [try answer(server, at: start, client: &client, random: &random)]
        for _ in 2...70 {
            sent.append(try #require(try client.credentials(forRealm: "parley.test", method: "INVITE", requestURI: uri, using: &random)))
        }
        #expect(try verify(&server, sent[2], at: start) == .accepted(username: "alice"))
        #expect(try verify(&server, sent[1], at: start) == .accepted(username: "alice"))
        #expect(try verify(&server, sent[1], at: start) == .forbidden(.replayedNonceCount(2)))
        #expect(try verify(&server, sent[69], at: start) == .accepted(username: "alice"))
        // The window holds 70 down to 7: nc 7 is unused and accepted; nc 6 is older than
        // the window, so it cannot be told from a replay and is refused.
        #expect(try verify(&server, sent[6], at: start) == .accepted(username: "alice"))
        #expect(try verify(&server, sent[5], at: start) == .forbidden(.replayedNonceCount(6)))
    }

    @Test func wrongPasswordUnknownUserAndWrongURIAreRefused() throws {
        var server = try makeServer()
        var random = SeededGenerator(seed: 3)
        var wrong = try SIPDigestClient(username: "alice", password: "guess")
        let bad = try answer(server, at: start, client: &wrong, random: &random)
        #expect(try verify(&server, bad, at: start) == .forbidden(.wrongPassword("alice")))
        var stranger = try SIPDigestClient(username: "mallory", password: "x")
        let unknown = try answer(server, at: start, client: &stranger, random: &random)
        #expect(try verify(&server, unknown, at: start) == .forbidden(.unknownUser("mallory")))
        var alice = try SIPDigestClient(username: "alice", password: "wonderland")
        let other = try answer(server, at: start, client: &alice, random: &random, requestURI: "sip:+4615550199@parley.test")
        #expect(try verify(&server, other, at: start) == .forbidden(.uriMismatch(credentials: "sip:+4615550199@parley.test", request: uri)))
        // The method is inside the hash too.
        let invite = try answer(server, at: start, client: &alice, random: &random)
        #expect(try verify(&server, invite, at: start, method: "BYE") == .forbidden(.wrongPassword("alice")))
        // None of these took a place in the replay table.
        #expect(server.trackedNonceCount == 0)
    }

    @Test func expiredNonceIsStaleAndTheClientRetriesWithoutFailing() throws {
        var server = try makeServer(.init(realm: "parley.test", nonceLifetimeSeconds: 60))
        var client = try SIPDigestClient(username: "bob", password: "builder")
        var random = SeededGenerator(seed: 3)
        let first = try answer(server, at: start, client: &client, random: &random)
        #expect(try verify(&server, first, at: start + 59) == .accepted(username: "bob"))
        let reused = try #require(try client.credentials(forRealm: "parley.test", method: "INVITE", requestURI: uri, using: &random))
        #expect(try verify(&server, reused, at: start + 60) == .challenge(stale: true))
        let retried = try answer(server, at: start + 60, client: &client, random: &random, stale: true, previous: [reused])
        #expect(try verify(&server, retried, at: start + 61) == .accepted(username: "bob"))
        // A nonce from more than a lifetime in the future (the clock was stepped back) is stale too.
        let future = try answer(server, at: start + 1000, client: &client, random: &random)
        #expect(try verify(&server, future, at: start + 1000 - 61) == .challenge(stale: true))
    }

    @Test func foreignOrForgedNoncesAreStaleOnlyWithTheRightPassword() throws {
        var server = try makeServer()
        var random = SeededGenerator(seed: 3)
        func credentials(nonce: String, password: String) throws -> SIPDigestCredentials {
            let response = try SIPDigestResponse.compute(
                algorithm: .sha256, username: "alice", realm: "parley.test", password: password, nonce: nonce,
                method: "INVITE", uri: uri, qop: .auth, nonceCount: 1, cnonce: "c")
            return SIPDigestCredentials(username: "alice", realm: "parley.test", nonce: nonce, uri: uri, response: response,
                                        algorithm: .sha256, cnonce: "c", qop: .auth, nonceCount: 1)
        }
        let genuine = try server.challenges(nowUnixSeconds: start, using: &random)[0].nonce
        var forged = Array(genuine)
        forged[3] = forged[3] == "0" ? "1" : "0"
        let otherSecret = try SIPDigestServer(configuration: .init(realm: "parley.test"), secret: [UInt8](repeating: 1, count: 32))
        let otherRealm = try SIPDigestServer(configuration: .init(realm: "other.test"), secret: secret)
        for nonce in [String(forged), try otherSecret.challenges(nowUnixSeconds: start, using: &random)[0].nonce,
                      try otherRealm.challenges(nowUnixSeconds: start, using: &random)[0].nonce, "short", String(repeating: "z", count: 64)] {
            #expect(try verify(&server, credentials(nonce: nonce, password: "wonderland"), at: start) == .challenge(stale: true))
            #expect(try verify(&server, credentials(nonce: nonce, password: "nope"), at: start) == .forbidden(.wrongPassword("alice")))
        }
        #expect(try verify(&server, credentials(nonce: genuine, password: "wonderland"), at: start) == .accepted(username: "alice"))
    }

    @Test func credentialsForOtherRealmsOrSchemesMeanChallenge() throws {
        var server = try makeServer()
        let none = server.verify(authorizationValues: [], method: "INVITE", requestURI: uri, nowUnixSeconds: start, password: password)
        #expect(none == .challenge(stale: false))
        let other = server.verify(
            authorizationValues: [#"Basic YWxpY2U6d29uZGVybGFuZA=="#,
                                  #"Digest username="alice", realm="elsewhere", nonce="n", uri="sip:x", response="ab", qop=auth, nc=00000001, cnonce="c""#],
            method: "INVITE", requestURI: uri, nowUnixSeconds: start, password: password)
        #expect(other == .challenge(stale: false))
    }

    @Test func picksTheValueOfItsRealmAmongSeveral() throws {
        var server = try makeServer()
        var client = try SIPDigestClient(username: "alice", password: "wonderland")
        var random = SeededGenerator(seed: 3)
        let credentials = try answer(server, at: start, client: &client, random: &random)
        let verdict = server.verify(
            authorizationValues: [#"Digest username="x", realm="upstream", nonce="n", uri="sip:x", response="ab""#, try credentials.serialized()],
            method: "INVITE", requestURI: uri, nowUnixSeconds: start, password: password)
        #expect(verdict == .accepted(username: "alice"))
    }

    @Test func malformedAndOversizedCredentialsAreForbidden() throws {
        var server = try makeServer()
        for values in [[#"Digest username="alice", realm="parley.test", nonce="n"#],
                       [#"Digest username="alice", realm="parley.test", nonce="n", uri="sip:x", response="ab", nc=1, qop=auth, cnonce="c""#],
                       ["Digest " + String(repeating: "x", count: SIPDigestLimits.maxHeaderValueBytes)],
                       Array(repeating: #"Basic abc"#, count: SIPDigestLimits.maxHeaderValues + 1)] {
            let verdict = server.verify(authorizationValues: values, method: "INVITE", requestURI: uri, nowUnixSeconds: start, password: password)
            guard case .forbidden(.malformedCredentials(let error)) = verdict else {
                Issue.record("\(values.first ?? ""): \(verdict)")
                continue
            }
            #expect(!error.description.isEmpty)
        }
    }

    @Test func onlyWhatWasOfferedIsAccepted() throws {
        var server = try makeServer(.init(realm: "parley.test", algorithms: [.sha512_256]))
        var random = SeededGenerator(seed: 3)
        var client = try SIPDigestClient(username: "alice", password: "wonderland")
        // An MD5 answer to a challenge the server never sent.
        let md5 = try client.answer(challenges: [SIPDigestChallenge(realm: "parley.test", nonce: server.challenges(nowUnixSeconds: start, using: &random)[0].nonce, algorithm: .md5)],
                                    method: "INVITE", requestURI: uri, using: &random)[0]
        #expect(try verify(&server, md5, at: start) == .forbidden(.algorithmNotOffered(.md5)))
        // RFC 2069 credentials, without qop: no nonce count, so no replay protection.
        let plain = try client.answer(challenges: [SIPDigestChallenge(realm: "parley.test", nonce: "n", algorithm: .sha512_256, qopOptions: [])],
                                      method: "INVITE", requestURI: uri, using: &random)[0]
        #expect(try verify(&server, plain, at: start) == .forbidden(.qopNotOffered(nil)))
        let authInt = try client.answer(challenges: [SIPDigestChallenge(realm: "parley.test", nonce: "n", algorithm: .sha512_256, qopOptions: [.authInt])],
                                        method: "INVITE", requestURI: uri, using: &random)[0]
        #expect(try verify(&server, authInt, at: start) == .forbidden(.qopNotOffered(.authInt)))
        let good = try answer(server, at: start, client: &client, random: &random)
        #expect(good.algorithm == .sha512_256)
        #expect(try verify(&server, good, at: start) == .accepted(username: "alice"))
    }

    @Test func authIntCoversTheBody() throws {
        var server = try makeServer(.init(realm: "parley.test", qopOptions: [.authInt]))
        var client = try SIPDigestClient(username: "alice", password: "wonderland")
        var random = SeededGenerator(seed: 3)
        let body = Array("v=0\r\nc=IN IP4 192.0.2.1\r\n".utf8)
        let credentials = try answer(server, at: start, client: &client, random: &random, body: body)
        #expect(credentials.qop == .authInt)
        var tampered = body
        tampered[tampered.count - 3] = UInt8(ascii: "9")
        #expect(try verify(&server, credentials, at: start, body: tampered) == .forbidden(.wrongPassword("alice")))
        #expect(try verify(&server, credentials, at: start, body: body) == .accepted(username: "alice"))
    }

    @Test func upperCaseResponseHexIsAccepted() throws {
        var server = try makeServer()
        var client = try SIPDigestClient(username: "alice", password: "wonderland")
        var random = SeededGenerator(seed: 3)
        var credentials = try answer(server, at: start, client: &client, random: &random)
        credentials.response = credentials.response.uppercased()
        #expect(try verify(&server, credentials, at: start) == .accepted(username: "alice"))
    }

    /// RFC 7616 §3.9.1's credentials checked by a server of that realm: the response is
    /// right (so the verdict is stale: the nonce is the RFC's, not this server's), and the
    /// same credentials fail with another password.
    @Test func verifiesRFC7616Credentials() throws {
        var server = try SIPDigestServer(configuration: .init(realm: "http-auth@example.org"), secret: secret)
        let value = """
            Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", algorithm=SHA-256, \
            nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", nc=00000001, \
            cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", qop=auth, \
            response="753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1", \
            opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
            """
        let right = server.verify(authorizationValues: [value], method: "GET", requestURI: "/dir/index.html",
                                  nowUnixSeconds: start, password: { $0 == "Mufasa" ? "Circle of Life" : nil })
        #expect(right == .challenge(stale: true))
        let wrong = server.verify(authorizationValues: [value], method: "GET", requestURI: "/dir/index.html",
                                  nowUnixSeconds: start, password: { $0 == "Mufasa" ? "Circle Of Life" : nil })
        #expect(wrong == .forbidden(.wrongPassword("Mufasa")))
    }

    /// The replay table never grows past its capacity, and a nonce whose window was
    /// dropped for room is answered stale, never accepted again.
    @Test func replayMemoryIsBounded() throws {
        var server = try makeServer(.init(realm: "parley.test", nonceLifetimeSeconds: 300, maxTrackedNonces: 4))
        var random = SeededGenerator(seed: 3)
        var clients = try (0..<6).map { _ in try SIPDigestClient(username: "alice", password: "wonderland") }
        var firsts: [SIPDigestCredentials] = []
        for index in 0..<5 {
            let credentials = try answer(server, at: start + Int64(index), client: &clients[index], random: &random)
            firsts.append(credentials)
            #expect(try verify(&server, credentials, at: start + 10) == .accepted(username: "alice"))
            #expect(server.trackedNonceCount <= 4)
        }
        // The oldest nonce's window went; its replay and its next count are both stale.
        #expect(try verify(&server, firsts[0], at: start + 10) == .challenge(stale: true))
        let next = try #require(try clients[0].credentials(forRealm: "parley.test", method: "INVITE", requestURI: uri, using: &random))
        #expect(try verify(&server, next, at: start + 10) == .challenge(stale: true))
        // Newer ones keep their window.
        #expect(try verify(&server, firsts[4], at: start + 10) == .forbidden(.replayedNonceCount(1)))
        // Once they expire, their windows go and new nonces take their place without loss.
        server.removeExpiredNonces(nowUnixSeconds: start + 400)
        #expect(server.trackedNonceCount == 0)
        let later = try answer(server, at: start + 400, client: &clients[5], random: &random)
        #expect(try verify(&server, later, at: start + 400) == .accepted(username: "alice"))
    }

    @Test func invalidConfigurationsAreRefused() {
        let configurations: [SIPDigestServer.Configuration] = [
            .init(realm: ""),
            .init(realm: "a\r\nb"),
            .init(realm: "r", algorithms: []),
            .init(realm: "r", algorithms: [.other("SHA-1")]),
            .init(realm: "r", algorithms: [.md5, .md5]),
            .init(realm: "r", qopOptions: []),
            .init(realm: "r", qopOptions: [.other("auth-conf")]),
            .init(realm: "r", nonceLifetimeSeconds: 0),
            .init(realm: "r", maxTrackedNonces: 0),
            .init(realm: "r", domain: ["sip:a b"]),
        ]
        for configuration in configurations {
            let error = #expect(throws: SIPDigestError.self) { try SIPDigestServer(configuration: configuration, secret: secret) }
            #expect(error?.kind == .invalidConfiguration, "\(configuration)")
        }
        let short = #expect(throws: SIPDigestError.self) {
            try SIPDigestServer(configuration: .init(realm: "r"), secret: [UInt8](repeating: 1, count: 15))
        }
        #expect(short?.kind == .invalidConfiguration)
    }

    @Test func refusalsDescribeThemselves() {
        let refusals: [SIPDigestServer.Refusal] = [
            .algorithmNotOffered(.md5), .qopNotOffered(nil), .qopNotOffered(.authInt), .uriMismatch(credentials: "a\r\n", request: "b"),
            .unknownUser("u"), .wrongPassword("u"), .replayedNonceCount(5),
        ]
        for refusal in refusals {
            #expect(!refusal.description.isEmpty)
            #expect(!refusal.description.contains("\r"))
        }
        #expect(SIPDigestServer.Refusal.replayedNonceCount(5).description == "nonce count 00000005 was already used")
    }
}
