import Testing
import ParleySIP

@Suite struct SIPDigestCredentialsTests {
    /// RFC 3261 §22.4's example credentials, folded over lines as the RFC prints them (its
    /// response was copied from RFC 2617's example and is not bob's: only parsing is tested).
    @Test func parsesRFC3261Example() throws {
        let credentials = try SIPDigestCredentials(parsing: """
            Digest username="bob",\r
             realm="biloxi.com",\r
             nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093",\r
             uri="sip:bob@biloxi.com",\r
             qop=auth,\r
             nc=00000001,\r
             cnonce="0a4f113b",\r
             response="6629fae49393a05397450978507c4ef1",\r
             opaque="5ccc069c403ebaf9f0171e9517f40e41"
            """)
        #expect(credentials.username == "bob")
        #expect(credentials.realm == "biloxi.com")
        #expect(credentials.uri == "sip:bob@biloxi.com")
        #expect(credentials.qop == .auth)
        #expect(credentials.nonceCount == 1)
        #expect(credentials.cnonce == "0a4f113b")
        #expect(credentials.response == "6629fae49393a05397450978507c4ef1")
        #expect(credentials.opaque == "5ccc069c403ebaf9f0171e9517f40e41")
        #expect(credentials.algorithm == nil)
    }

    /// RFC 7616 §3.9.1's SHA-256 Authorization value.
    @Test func parsesRFC7616Example() throws {
        let credentials = try SIPDigestCredentials(parsing: """
            Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", algorithm=SHA-256, \
            nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", nc=00000001, \
            cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", qop=auth, \
            response="753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1", \
            opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
            """)
        #expect(credentials.algorithm == .sha256)
        #expect(credentials.nonce == "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v")
    }

    @Test func roundTrips() throws {
        let all = [
            SIPDigestCredentials(username: #"al"ice\"#, realm: "parley.test", nonce: "n", uri: "sip:bob@parley.test;transport=tcp",
                                 response: "0123abcd", algorithm: .sha256, cnonce: "c", opaque: "o", qop: .authInt, nonceCount: 0xFFFF_FFFF),
            SIPDigestCredentials(username: "bob", realm: "r", nonce: "n", uri: "sip:r", response: "ab"),
        ]
        for credentials in all {
            let written = try credentials.serialized()
            #expect(try SIPDigestCredentials(parsing: written) == credentials, "\(written)")
        }
        #expect(try all[0].serialized() == #"""
            Digest username="al\"ice\\", realm="parley.test", nonce="n", uri="sip:bob@parley.test;transport=tcp", response="0123abcd", algorithm=SHA-256, cnonce="c", opaque="o", qop=auth-int, nc=ffffffff
            """#)
    }

    @Test func lenientWhereServersDiffer() throws {
        // Quoted nc, qop and algorithm, upper-case hex response: all seen in the field.
        let credentials = try SIPDigestCredentials(parsing:
            #"Digest Username="u", REALM="r", nonce="n", uri="sip:r", response="ABCDEF", qop="auth", nc="0000000A", cnonce="c", algorithm="md5""#)
        #expect(credentials.nonceCount == 10)
        #expect(credentials.algorithm == .md5)
        #expect(credentials.qop == .auth)
    }

    @Test func malformedValuesGiveClearErrors() {
        let base = #"username="u", realm="r", nonce="n", uri="sip:r", response="abcd""#
        let cases: [(String, SIPDigestError.Kind)] = [
            (#"Digest realm="r", nonce="n", uri="sip:r", response="ab""#, .missingParameter),
            (#"Digest username="u", realm="r", nonce="n", response="ab""#, .missingParameter),
            (#"Digest username="u", realm="r", nonce="n", uri="sip:r""#, .missingParameter),
            ("Digest \(base), qop=auth, nc=00000001", .missingParameter),
            ("Digest \(base), qop=auth, cnonce=\"c\"", .missingParameter),
            ("Digest \(base), qop=auth, cnonce=\"c\", nc=1", .invalidParameter),
            ("Digest \(base), qop=auth, cnonce=\"c\", nc=0000000g", .invalidParameter),
            ("Digest \(base), qop=auth, cnonce=\"c\", nc=000000001", .invalidParameter),
            ("Digest \(base), qop=auth, cnonce=\"c\", nc=+0000001", .invalidParameter),
            ("Digest \(base), qop=\"auth,auth-int\", cnonce=\"c\", nc=00000001", .invalidParameter),
            (#"Digest username="u", realm="r", nonce="n", uri="sip:r", response="not hex""#, .invalidParameter),
            (#"Digest username="u", realm="r", nonce="n", uri="sip:r", response="""#, .invalidParameter),
            ("Digest \(base), username=\"v\"", .duplicateParameter),
            ("Digest \(base), response=\"ffff\"", .duplicateParameter),
            (#"Bearer abc"#, .unsupportedScheme),
            ("Digest \(base), uri=\"sip:\r\nx\"", .malformed),
        ]
        for (value, kind) in cases {
            let error = #expect(throws: SIPDigestError.self) { try SIPDigestCredentials(parsing: value) }
            #expect(error?.kind == kind, "\(value.debugDescription): \(String(describing: error))")
        }
    }

    @Test func serializingRefusesWhatAHeaderCannotCarry() {
        var credentials = SIPDigestCredentials(username: "u", realm: "r", nonce: "n", uri: "sip:r", response: "ab")
        credentials.uri = "sip:r\r\nContact: <sip:evil>"
        #expect(throws: SIPDigestError.self) { try credentials.serialized() }
        credentials.uri = "sip:r"
        credentials.qop = .other("auth auth")
        #expect(throws: SIPDigestError.self) { try credentials.serialized() }
    }
}
