import ParleyAuth

/// User token work as `parleyd` does it per `hello`: verifying a Sinch-format token
/// (parse, key derivation, HMAC, claims, nonce cache), minting one as `parley token`
/// does, and checking REST Basic credentials.
func authBenchmarks() -> [Benchmark] {
    let secret = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="
    let key = "3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41"
    let issuedAt: Int64 = 1_764_421_200
    guard let application = try? ApplicationCredentials(key: key, secret: ApplicationSecret(base64: secret)),
          let token = try? UserToken.mint(applicationKey: key, secret: secret, userID: "alice", issuedAt: issuedAt,
                                          lifetime: 600, nonce: "q3Zt8yW1Lm4Rv8Tz") else {
        fatalError("benchmark fixtures do not build")
    }
    let verifier = TokenVerifier()
    // Distinct nonces for the verify-with-replay-cache row: mint them up front, and start
    // a fresh cache when they run out so the cache stays at a realistic size.
    let nonceTokens: [String] = (0..<4096).map { index in
        (try? UserToken.mint(applicationKey: key, secret: secret, userID: "user\(index)", issuedAt: issuedAt,
                             lifetime: 600, nonce: "nonce-\(index)")) ?? token
    }
    var cache = NonceReplayCache()
    var next = 0
    let basic = BasicCredentials(applicationKey: key, secret: secret).authorizationValue
    return [
        Benchmark(format: "auth", operation: "verify user token (no replay cache)", messageBytes: token.utf8.count) {
            if let claims = try? verifier.verifyIgnoringReplay(token, for: application, now: issuedAt + 30) {
                benchmarkSink &+= claims.userID.utf8.count
            }
        },
        Benchmark(format: "auth", operation: "verify user token + nonce cache", messageBytes: token.utf8.count) {
            if next == nonceTokens.count {
                next = 0
                cache = NonceReplayCache()
            }
            if let claims = try? verifier.verify(nonceTokens[next], for: application, now: issuedAt + 30, nonces: &cache) {
                benchmarkSink &+= claims.userID.utf8.count
            }
            next += 1
        },
        Benchmark(format: "auth", operation: "mint user token", messageBytes: token.utf8.count) {
            if let minted = try? UserToken.mint(applicationKey: key, secret: secret, userID: "alice", issuedAt: issuedAt,
                                                lifetime: 600, nonce: "q3Zt8yW1Lm4Rv8Tz") {
                benchmarkSink &+= minted.utf8.count
            }
        },
        Benchmark(format: "auth", operation: "parse + check Basic credentials", messageBytes: basic.utf8.count) {
            if let credentials = try? BasicCredentials.parse(authorization: basic),
               (try? application.authenticate(credentials, now: issuedAt)) != nil {
                benchmarkSink &+= 1
            }
        },
    ]
}
