import Testing
import ParleySIP

/// Known answers. The RFC values are the RFCs' own; the SHA-512-256 ones (RFC 7616
/// §3.9.2's printed values do not match its inputs, errata 4897), auth-int and -sess were
/// computed independently with Python's hashlib:
/// `H(H(u:r:p)[:nonce:cnonce]:nonce:nc:cnonce:qop:H(method:uri[:H(body)]))`.
@Suite struct SIPDigestResponseTests {
    /// RFC 2617 §3.5: MD5, qop=auth.
    @Test func rfc2617Example() throws {
        let response = try SIPDigestResponse.compute(
            algorithm: .md5, username: "Mufasa", realm: "testrealm@host.com", password: "Circle Of Life",
            nonce: "dcd98b7102dd2f0e8b11d0f600bfb0c093", method: "GET", uri: "/dir/index.html",
            qop: .auth, nonceCount: 1, cnonce: "0a4f113b")
        #expect(response == "6629fae49393a05397450978507c4ef1")
    }

    /// RFC 7616 §3.9.1's inputs (password "Circle of Life", lower-case "of": errata 4495).
    private func rfc7616(_ algorithm: SIPDigestAlgorithm) throws -> String {
        try SIPDigestResponse.compute(
            algorithm: algorithm, username: "Mufasa", realm: "http-auth@example.org", password: "Circle of Life",
            nonce: "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", method: "GET", uri: "/dir/index.html",
            qop: .auth, nonceCount: 1, cnonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ")
    }

    /// RFC 7616 §3.9.1, MD5 and SHA-256.
    @Test func rfc7616Examples() throws {
        #expect(try rfc7616(.md5) == "8ca523f5e9506fed4657c9700eebdbec")
        #expect(try rfc7616(.sha256) == "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1")
    }

    /// The same inputs with SHA-512-256 (RFC 8760), computed with hashlib's sha512_256.
    @Test func sha512_256WithRFC7616Inputs() throws {
        #expect(try rfc7616(.sha512_256) == "430d05014cecc49cab6fbe03176d41a1da86cbfe24a16580e22aaad928d960d0")
    }

    /// A SIP INVITE (draft-smith-sipping-auth-examples-01 §3.2: bob, zanzibar, biloxi.com).
    @Test func sipInviteExample() throws {
        let response = try SIPDigestResponse.compute(
            algorithm: .md5, username: "bob", realm: "biloxi.com", password: "zanzibar",
            nonce: "dcd98b7102dd2f0e8b11d0f600bfb0c093", method: "INVITE", uri: "sip:bob@biloxi.com",
            qop: .auth, nonceCount: 1, cnonce: "0a4f113b")
        #expect(response == "89eb0059246c02b2f6ee02c7961d5ea3")
    }

    /// RFC 2069 form (no qop), with RFC 2617 §3.5's inputs.
    @Test func rfc2069WithoutQOP() throws {
        let response = try SIPDigestResponse.compute(
            algorithm: .md5, username: "Mufasa", realm: "testrealm@host.com", password: "Circle Of Life",
            nonce: "dcd98b7102dd2f0e8b11d0f600bfb0c093", method: "GET", uri: "/dir/index.html",
            qop: nil, nonceCount: nil, cnonce: nil)
        #expect(response == "670fd8c2df070c60b045671b8b24ff02")
    }

    @Test func authIntHashesTheBody() throws {
        let body = Array("v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\n".utf8)
        func compute(_ body: [UInt8]) throws -> String {
            try SIPDigestResponse.compute(
                algorithm: .sha256, username: "alice", realm: "parley.test", password: "s3cret", nonce: "abc123",
                method: "INVITE", uri: "sip:bob@parley.test", qop: .authInt, nonceCount: 2, cnonce: "deadbeef", body: body)
        }
        #expect(try compute(body) == "b693ad6dbf7662d6dd13e0e43c5f139cb9529b02fb2e210bc41c52b1f7015e85")
        #expect(try compute(body + [0x20]) != compute(body))
    }

    @Test func sessionAlgorithms() throws {
        func compute(_ algorithm: SIPDigestAlgorithm) throws -> String {
            try SIPDigestResponse.compute(
                algorithm: algorithm, username: "alice", realm: "parley.test", password: "s3cret", nonce: "abc123",
                method: "REGISTER", uri: "sip:parley.test", qop: .auth, nonceCount: 10, cnonce: "deadbeef")
        }
        #expect(try compute(.md5Sess) == "b5192c3691a58b03abbd546564bab7ba")
        #expect(try compute(.sha512_256Sess) == "2f33ead4a89b2f63f13538a035b4b1533987b151cd912f6b71e96943965d277d")
    }

    @Test func nonceCountIsEightLowercaseHexDigits() {
        #expect(SIPDigestResponse.nonceCountText(1) == "00000001")
        #expect(SIPDigestResponse.nonceCountText(0xABCDEF) == "00abcdef")
        #expect(SIPDigestResponse.nonceCountText(.max) == "ffffffff")
    }

    @Test func unsupportedInputsThrowClearErrors() {
        #expect(throws: SIPDigestError.self) {
            try SIPDigestResponse.compute(algorithm: .other("SHA-1"), username: "a", realm: "r", password: "p", nonce: "n",
                                          method: "INVITE", uri: "sip:x", qop: .auth, nonceCount: 1, cnonce: "c")
        }
        let missing = #expect(throws: SIPDigestError.self) {
            try SIPDigestResponse.compute(algorithm: .md5, username: "a", realm: "r", password: "p", nonce: "n",
                                          method: "INVITE", uri: "sip:x", qop: .auth, nonceCount: nil, cnonce: nil)
        }
        #expect(missing?.kind == .missingParameter)
        let qop = #expect(throws: SIPDigestError.self) {
            try SIPDigestResponse.compute(algorithm: .md5, username: "a", realm: "r", password: "p", nonce: "n",
                                          method: "INVITE", uri: "sip:x", qop: .other("auth-conf"), nonceCount: 1, cnonce: "c")
        }
        #expect(qop?.kind == .unsupportedQOP)
    }
}
