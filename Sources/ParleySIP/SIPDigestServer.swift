/// A SIP server's digest authentication (RFC 3261 §22.1, §22.4; RFC 8760 §2.3) for one
/// realm: issues challenges and verifies the credentials of requests. A value (sans-I/O):
/// the caller passes the time (wall-clock Unix seconds) and the randomness in, keeps the
/// value behind its own lock or on its loop, and turns the ``Verdict`` into a response.
///
/// Nonces are stateless (``SIPDigestNonce``): an HMAC over their issue time under a
/// per-server secret. They expire after ``Configuration/nonceLifetimeSeconds``, answered
/// with `stale=true` so a client retries without asking its user. Accepted nonce counts
/// go into a bounded replay window per nonce (``SIPDigestReplayWindow``), so a captured
/// request cannot be played again. Responses are compared in constant time.
///
/// Because the secret lives in this value, nonces of one process are not accepted by
/// another or after a restart; clients then see `stale=true` and retry once. Several
/// nodes behind one address need a shared secret and would each keep their own windows.
public struct SIPDigestServer: Sendable {
    /// What the server offers and how long a nonce lives.
    public struct Configuration: Sendable, Hashable {
        /// The realm of every challenge; credentials for another realm are not ours.
        public var realm: String
        /// The algorithms offered, most preferred first: one challenge each (RFC 8760 §2.3).
        public var algorithms: [SIPDigestAlgorithm]
        /// The qop options offered (RFC 3261 §22.4 has servers always send one).
        public var qopOptions: [SIPDigestQOP]
        /// How long a nonce is good for, in seconds (default 300: a register refresh or a
        /// burst of calls reuses one; a captured one is soon useless).
        public var nonceLifetimeSeconds: Int64
        /// The most nonces with a replay window at once (default 10,000, under 1 MB).
        public var maxTrackedNonces: Int
        /// The URIs sent as `domain`, none by default.
        public var domain: [String]

        /// A configuration; SHA-256 then MD5 by default (MD5 because most SIP phones and
        /// trunks still speak nothing else), qop auth only.
        public init(
            realm: String, algorithms: [SIPDigestAlgorithm] = [.sha256, .md5], qopOptions: [SIPDigestQOP] = [.auth],
            nonceLifetimeSeconds: Int64 = 300, maxTrackedNonces: Int = 10_000, domain: [String] = []
        ) {
            self.realm = realm
            self.algorithms = algorithms
            self.qopOptions = qopOptions
            self.nonceLifetimeSeconds = nonceLifetimeSeconds
            self.maxTrackedNonces = maxTrackedNonces
            self.domain = domain
        }
    }

    /// What to do with a request.
    public enum Verdict: Sendable, Hashable {
        /// The credentials are right: the request comes from `username`.
        case accepted(username: String)
        /// Send a 401 (or 407) with ``challenges(stale:nowUnixSeconds:using:)``: there are
        /// no credentials for this realm, or (`stale` true) they were right but their nonce
        /// expired, was forgotten or is not this server's (an old secret).
        case challenge(stale: Bool)
        /// Refuse the request (403, or 400 for malformed credentials); the reason is for
        /// the log, not for the peer.
        case forbidden(Refusal)
    }

    /// Why credentials were refused. Log it; answer ``unknownUser(_:)`` and
    /// ``wrongPassword(_:)`` alike so a peer cannot probe for usernames.
    public enum Refusal: Sendable, Hashable, CustomStringConvertible {
        /// The header value did not parse, or there were too many values.
        case malformedCredentials(SIPDigestError)
        /// The credentials use an algorithm this server does not offer.
        case algorithmNotOffered(SIPDigestAlgorithm)
        /// The credentials use a qop this server does not offer; nil for RFC 2069
        /// credentials without qop, which have no nonce count to stop replays.
        case qopNotOffered(SIPDigestQOP?)
        /// `uri` is not the request's Request-URI: the response was computed for another request.
        case uriMismatch(credentials: String, request: String)
        /// No password is known for the username.
        case unknownUser(String)
        /// The response does not match the password.
        case wrongPassword(String)
        /// The nonce count was used before (or is too far behind the highest one seen).
        case replayedNonceCount(UInt32)

        public var description: String {
            switch self {
            case .malformedCredentials(let error): "malformed credentials: \(error)"
            case .algorithmNotOffered(let algorithm): "algorithm \(SIPDigestError.printable(algorithm.token)) was not offered"
            case .qopNotOffered(let qop): qop.map { "qop \(SIPDigestError.printable($0.token)) was not offered" } ?? "credentials without qop"
            case .uriMismatch(let credentials, let request):
                "uri \"\(SIPDigestError.printable(credentials))\" is not the Request-URI \"\(SIPDigestError.printable(request))\""
            case .unknownUser(let username): "unknown user \"\(SIPDigestError.printable(username))\""
            case .wrongPassword(let username): "wrong password for \"\(SIPDigestError.printable(username))\""
            case .replayedNonceCount(let count): "nonce count \(SIPDigestResponse.nonceCountText(count)) was already used"
            }
        }
    }

    public let configuration: Configuration
    private let secret: [UInt8]
    private var replayWindow: SIPDigestReplayWindow

    /// The shortest secret accepted, in bytes.
    public static let minimumSecretBytes = 16

    /// A server for `configuration` whose nonces are keyed by `secret` (at least
    /// ``minimumSecretBytes``; draw 32 from `SecureRandom.bytes` at startup). Throws
    /// `invalidConfiguration` for an empty realm or one with control characters, no or
    /// unsupported or repeated algorithms, no qop or one other than auth and auth-int, a
    /// lifetime or capacity below 1, a domain URI with whitespace, or a short secret.
    public init(configuration: Configuration, secret: [UInt8]) throws(SIPDigestError) {
        func invalid(_ reason: String) -> SIPDigestError { SIPDigestError(.invalidConfiguration, reason) }
        guard !configuration.realm.isEmpty else { throw invalid("empty realm") }
        guard !configuration.algorithms.isEmpty else { throw invalid("no algorithm offered") }
        for algorithm in configuration.algorithms where !algorithm.isSupported {
            throw invalid("algorithm \(SIPDigestError.printable(algorithm.token)) is not supported")
        }
        guard Set(configuration.algorithms).count == configuration.algorithms.count else { throw invalid("an algorithm is offered twice") }
        guard !configuration.qopOptions.isEmpty, configuration.qopOptions.allSatisfy(\.isSupported) else {
            throw invalid("qop options must be auth and/or auth-int")
        }
        guard configuration.nonceLifetimeSeconds >= 1 else { throw invalid("nonce lifetime below 1 s") }
        guard configuration.maxTrackedNonces >= 1 else { throw invalid("replay window capacity below 1") }
        for uri in configuration.domain where uri.isEmpty || uri.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\"") }) {
            throw invalid("domain URI \"\(SIPDigestError.printable(uri))\" is empty or holds whitespace, a quote or a control character")
        }
        guard secret.count >= Self.minimumSecretBytes else { throw invalid("secret of \(secret.count) bytes, fewer than \(Self.minimumSecretBytes)") }
        self.configuration = configuration
        self.secret = secret
        self.replayWindow = SIPDigestReplayWindow(capacity: configuration.maxTrackedNonces)
        // Every challenge must be writable, so the realm and domain are checked once here.
        var probe = SIPDigestChallenge(realm: configuration.realm, nonce: "0", domain: configuration.domain)
        probe.qopOptions = configuration.qopOptions
        do { _ = try probe.serialized() } catch { throw invalid("realm or domain cannot be written into a header: \(error.reason)") }
    }

    /// Nonces that currently have a replay window.
    public var trackedNonceCount: Int { replayWindow.count }

    /// The challenges of a 401 or 407: one per configured algorithm, most preferred first,
    /// sharing one fresh nonce issued at `nowUnixSeconds` (its salt drawn from `generator`).
    public func challenges(
        stale: Bool = false, nowUnixSeconds: Int64, using generator: inout some RandomNumberGenerator
    ) throws(SIPDigestError) -> [SIPDigestChallenge] {
        let nonce = try SIPDigestNonce(issuedAt: nowUnixSeconds, salt: generator.next()).text(realm: configuration.realm, secret: secret)
        return configuration.algorithms.map { algorithm in
            SIPDigestChallenge(realm: configuration.realm, nonce: nonce, algorithm: algorithm, qopOptions: configuration.qopOptions,
                               stale: stale, domain: configuration.domain)
        }
    }

    /// ``challenges(stale:nowUnixSeconds:using:)`` as header values, one per header field.
    public func challengeValues(
        stale: Bool = false, nowUnixSeconds: Int64, using generator: inout some RandomNumberGenerator
    ) throws(SIPDigestError) -> [String] {
        var values: [String] = []
        for challenge in try challenges(stale: stale, nowUnixSeconds: nowUnixSeconds, using: &generator) {
            values.append(try challenge.serialized())
        }
        return values
    }

    /// Verifies a request from the values of its Authorization (or Proxy-Authorization)
    /// header fields, the text after the colon. Values of other schemes and other realms
    /// are skipped (they are for someone else); the first Digest value of this realm is
    /// verified as ``verify(_:method:requestURI:body:nowUnixSeconds:password:)`` does.
    /// Without one: `challenge(stale: false)`, or `forbidden(.malformedCredentials)` if a
    /// value did not parse or there are more than `SIPDigestLimits.maxHeaderValues`.
    public mutating func verify(
        authorizationValues: [String], method: String, requestURI: String, body: [UInt8] = [],
        nowUnixSeconds: Int64, password: (_ username: String) -> String?
    ) -> Verdict {
        guard authorizationValues.count <= SIPDigestLimits.maxHeaderValues else {
            return .forbidden(.malformedCredentials(SIPDigestError(
                .inputTooLarge, "\(authorizationValues.count) credentials, more than the \(SIPDigestLimits.maxHeaderValues) read")))
        }
        var firstProblem: SIPDigestError?
        for value in authorizationValues {
            do {
                let credentials = try SIPDigestCredentials(parsing: value)
                guard credentials.realm == configuration.realm else { continue }
                return verify(credentials, method: method, requestURI: requestURI, body: body,
                              nowUnixSeconds: nowUnixSeconds, password: password)
            } catch where error.kind == .unsupportedScheme {
                continue
            } catch {
                if firstProblem == nil { firstProblem = error }
            }
        }
        if let firstProblem { return .forbidden(.malformedCredentials(firstProblem)) }
        return .challenge(stale: false)
    }

    /// Verifies parsed credentials against the request they came with.
    ///
    /// In order: the realm must be this server's (else a plain challenge); algorithm and
    /// qop must be ones offered, with a cnonce and an nc of at least 1; `uri` must equal
    /// the Request-URI byte for byte; the response must match the password `password`
    /// returns for the username (computed for unknown users too, so both take the same
    /// time). Only then the nonce: not this server's, expired or forgotten gives
    /// `challenge(stale: true)`, as the client showed it knows the password; a count
    /// seen before gives `forbidden(.replayedNonceCount)`.
    public mutating func verify(
        _ credentials: SIPDigestCredentials, method: String, requestURI: String, body: [UInt8] = [],
        nowUnixSeconds: Int64, password: (_ username: String) -> String?
    ) -> Verdict {
        guard credentials.realm == configuration.realm else { return .challenge(stale: false) }
        let algorithm = credentials.algorithm ?? .md5
        guard configuration.algorithms.contains(algorithm) else { return .forbidden(.algorithmNotOffered(algorithm)) }
        guard let qop = credentials.qop, configuration.qopOptions.contains(qop) else {
            return .forbidden(.qopNotOffered(credentials.qop))
        }
        guard let nonceCount = credentials.nonceCount, nonceCount >= 1, let cnonce = credentials.cnonce else {
            return .forbidden(.malformedCredentials(SIPDigestError(.missingParameter, "qop \(qop.token) needs a cnonce and an nc of at least 1")))
        }
        guard credentials.uri == requestURI else {
            return .forbidden(.uriMismatch(credentials: credentials.uri, request: requestURI))
        }
        let known = password(credentials.username)
        let expected: String
        do {
            expected = try SIPDigestResponse.compute(
                algorithm: algorithm, username: credentials.username, realm: credentials.realm,
                password: known ?? "parley-unknown-user", nonce: credentials.nonce, method: method, uri: credentials.uri,
                qop: qop, nonceCount: nonceCount, cnonce: cnonce, body: body)
        } catch {
            return .forbidden(.malformedCredentials(error))
        }
        let matches = SIPDigestHash.constantTimeEqual(Array(expected.utf8), Array(credentials.response.lowercased().utf8))
        guard known != nil else { return .forbidden(.unknownUser(credentials.username)) }
        guard matches else { return .forbidden(.wrongPassword(credentials.username)) }

        let lifetime = configuration.nonceLifetimeSeconds
        let nonce: SIPDigestNonce?
        do {
            nonce = try SIPDigestNonce.verified(credentials.nonce, realm: configuration.realm, secret: secret)
        } catch {
            return .forbidden(.malformedCredentials(error))
        }
        guard let nonce, !nonce.isExpired(now: nowUnixSeconds, lifetime: lifetime) else { return .challenge(stale: true) }
        switch replayWindow.record(nonce, count: nonceCount, now: nowUnixSeconds, lifetime: lifetime) {
        case .fresh: return .accepted(username: credentials.username)
        case .replayed: return .forbidden(.replayedNonceCount(nonceCount))
        case .forgotten: return .challenge(stale: true)
        }
    }

    /// Drops the replay windows of expired nonces. The server does this itself when the
    /// table is full; call it now and then (once a minute) to free memory sooner.
    public mutating func removeExpiredNonces(nowUnixSeconds: Int64) {
        replayWindow.removeExpired(now: nowUnixSeconds, lifetime: configuration.nonceLifetimeSeconds)
    }
}
