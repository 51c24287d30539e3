import ParleyAuth
import Testing

@Suite struct NonceReplayCacheTests {
    static func kind(_ body: () throws(AuthError) -> Void) -> AuthError.Kind? {
        do { try body(); return nil } catch { return error.kind }
    }

    @Test func refusesAReplayUntilTheEntryExpires() throws {
        var cache = NonceReplayCache()
        try cache.record(nonce: "n", applicationKey: "a", expiresAt: 100, now: 0)
        #expect(Self.kind { () throws(AuthError) in try cache.record(nonce: "n", applicationKey: "a", expiresAt: 200, now: 99) } == .replayedNonce)
        try cache.record(nonce: "n", applicationKey: "a", expiresAt: 200, now: 100)
        #expect(cache.count == 1)
    }

    @Test func applicationsAreSeparate() throws {
        var cache = NonceReplayCache(capacityPerApplication: 1)
        try cache.record(nonce: "n", applicationKey: "a", expiresAt: 100, now: 0)
        try cache.record(nonce: "n", applicationKey: "b", expiresAt: 100, now: 0)
        #expect(cache.count(applicationKey: "a") == 1)
        #expect(cache.count(applicationKey: "b") == 1)
        #expect(cache.count == 2)
    }

    /// At capacity, a new nonce is refused rather than evicting a live one; expired entries
    /// make room again.
    @Test func fullCacheRefusesAndRecovers() throws {
        var cache = NonceReplayCache(capacityPerApplication: 3)
        for (index, expiry) in [50, 30, 40].enumerated() {
            try cache.record(nonce: "n\(index)", applicationKey: "a", expiresAt: Int64(expiry), now: 0)
        }
        #expect(Self.kind { () throws(AuthError) in try cache.record(nonce: "new", applicationKey: "a", expiresAt: 60, now: 29) } == .replayCacheFull)
        #expect(cache.count(applicationKey: "a") == 3)
        try cache.record(nonce: "new", applicationKey: "a", expiresAt: 60, now: 30)
        #expect(Self.kind { () throws(AuthError) in try cache.record(nonce: "n0", applicationKey: "a", expiresAt: 60, now: 30) } == .replayedNonce)
        #expect(Self.kind { () throws(AuthError) in try cache.record(nonce: "n2", applicationKey: "a", expiresAt: 60, now: 30) } == .replayedNonce)
        // n1 expired at 30, so it may be used again.
        #expect(Self.kind { () throws(AuthError) in try cache.record(nonce: "n1", applicationKey: "a", expiresAt: 60, now: 30) } == .replayCacheFull)
        cache.removeExpired(now: 50)
        #expect(cache.count == 1)
        try cache.record(nonce: "n1", applicationKey: "a", expiresAt: 60, now: 50)
    }

    @Test func alreadyExpiredEntriesAreNotStored() throws {
        var cache = NonceReplayCache()
        try cache.record(nonce: "n", applicationKey: "a", expiresAt: 10, now: 10)
        #expect(cache.count == 0)
    }

    @Test func manyEntriesExpireInOrder() throws {
        var cache = NonceReplayCache(capacityPerApplication: 10_000)
        for index in 0..<5000 {
            try cache.record(nonce: "n\(index)", applicationKey: "a", expiresAt: Int64(1000 + (index * 7919) % 5000), now: 0)
        }
        #expect(cache.count == 5000)
        cache.removeExpired(now: 3500)
        #expect(cache.count == 2499)
        cache.removeExpired(now: 6000)
        #expect(cache.count == 0)
    }
}
