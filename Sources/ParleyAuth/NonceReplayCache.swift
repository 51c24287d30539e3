import ParleyWireCore

/// The nonces of accepted user tokens, per application, each kept until the token could
/// no longer be accepted anyway (its `exp` plus the clock-skew leeway). Sans-I/O: the
/// caller passes the time and owns the value (one per server, behind its own lock).
///
/// Memory is bounded: each entry is a 128-bit digest of the nonce plus its expiry
/// (about 60 bytes with the dictionary and heap), at most ``capacityPerApplication``
/// per application. When an application is at capacity after dropping expired entries,
/// ``record(nonce:applicationKey:expiresAt:now:)`` refuses the token with
/// `replayCacheFull` rather than forgetting a nonce that is still live, which would
/// make its token replayable. An application can thus have 100,000 (the default)
/// tokens accepted per token lifetime: about 1.2 per second sustained with 24-hour
/// tokens, 166 per second with 10-minute tokens (what docs/auth.md recommends).
public struct NonceReplayCache: Sendable {
    /// The default ``capacityPerApplication``.
    public static let defaultCapacityPerApplication = 100_000

    /// Live nonces kept per application at most.
    public let capacityPerApplication: Int

    private struct NonceDigest: Hashable, Sendable {
        let high: UInt64
        let low: UInt64
    }

    /// Ordered by expiry (then digest, so the order is total).
    private struct Entry: Sendable, Comparable {
        let expiresAt: Int64
        let digest: NonceDigest

        static func < (a: Entry, b: Entry) -> Bool {
            (a.expiresAt, a.digest.high, a.digest.low) < (b.expiresAt, b.digest.high, b.digest.low)
        }
    }

    /// One application's nonces: a set for lookups and a min-heap by expiry for pruning.
    private struct Bucket: Sendable {
        var live: [NonceDigest: Int64] = [:]
        var heap = MinHeap<Entry>()

        mutating func removeExpired(now: Int64) {
            while let first = heap.min, first.expiresAt <= now {
                heap.popMin()
                if let expiry = live[first.digest], expiry <= now { live[first.digest] = nil }
            }
        }

        mutating func push(_ entry: Entry) { heap.push(entry) }
    }

    private var buckets: [String: Bucket] = [:]

    /// An empty cache keeping at most `capacityPerApplication` (at least 1) live nonces per application.
    public init(capacityPerApplication: Int = defaultCapacityPerApplication) {
        self.capacityPerApplication = max(1, capacityPerApplication)
    }

    /// Live nonces over all applications.
    public var count: Int { buckets.values.reduce(0) { $0 + $1.live.count } }

    /// Live nonces of one application (including expired ones not yet pruned).
    public func count(applicationKey: String) -> Int { buckets[applicationKey]?.live.count ?? 0 }

    /// Records `nonce` for `applicationKey` until `expiresAt` (Unix seconds, exclusive).
    ///
    /// Throws `replayedNonce` if the nonce is live for this application, `replayCacheFull`
    /// if the application has ``capacityPerApplication`` live nonces. Records nothing
    /// when it throws. Call it only for tokens that passed every other check, so forged
    /// tokens cannot fill the cache.
    public mutating func record(nonce: String, applicationKey: String, expiresAt: Int64, now: Int64) throws(AuthError) {
        let digest = try Self.digest(nonce)
        var bucket = buckets.removeValue(forKey: applicationKey) ?? Bucket()
        defer { if !bucket.live.isEmpty { buckets[applicationKey] = bucket } }
        bucket.removeExpired(now: now)
        if let expiry = bucket.live[digest], expiry > now {
            throw AuthError(.replayedNonce, field: "nonce", "nonce \"\(AuthError.printable(nonce))\" was already used by a token of this application")
        }
        guard bucket.live.count < capacityPerApplication else {
            throw AuthError(.replayCacheFull, field: "nonce",
                            "the application has \(bucket.live.count) unexpired tokens in use, the most the server keeps; retry later or mint shorter-lived tokens")
        }
        guard expiresAt > now else { return }
        bucket.live[digest] = expiresAt
        bucket.push(Entry(expiresAt: expiresAt, digest: digest))
    }

    /// Drops every entry expired at `now`, in every application; call it now and then
    /// (e.g. once a minute) so idle applications free their memory too.
    public mutating func removeExpired(now: Int64) {
        for key in Array(buckets.keys) {
            guard var bucket = buckets.removeValue(forKey: key) else { continue }
            bucket.removeExpired(now: now)
            if !bucket.live.isEmpty { buckets[key] = bucket }
        }
    }

    /// The first 128 bits of SHA-256(nonce): fixed-size entries whatever the nonce length.
    private static func digest(_ nonce: String) throws(AuthError) -> NonceDigest {
        let hash = try AuthCrypto.sha256(Array(nonce.utf8))
        var high: UInt64 = 0
        var low: UInt64 = 0
        for index in 0..<8 {
            high = high << 8 | UInt64(hash[index])
            low = low << 8 | UInt64(hash[index + 8])
        }
        return NonceDigest(high: high, low: low)
    }
}
