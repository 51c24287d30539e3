/// A SIP client's digest authentication (RFC 3261 §22.2, §22.3; RFC 8760 §2.4) toward one
/// account: answers 401/407 challenges and reuses the last nonce of each realm for later
/// requests, counting `nc` per nonce. A value (sans-I/O): the caller keeps it with the
/// account, passes the challenges it received and the randomness for cnonces, and puts the
/// returned credentials into the retried request.
///
/// It stops rather than loops: a server that challenges again, not stale, right after an
/// answer to a fresh challenge refused the password (`credentialsRefused`); one that says
/// `stale=true` to more than `SIPDigestLimits.maxStaleRetries` answers in a row never
/// accepts its own nonces (`staleRetriesExhausted`). A stale challenge is otherwise
/// answered at once with the same password, as RFC 7616 §3.3 intends.
public struct SIPDigestClient: Sendable, CustomStringConvertible, CustomReflectable {
    /// The account's username, written into every credentials.
    public let username: String
    private let password: String
    /// One entry per realm answered, least recently used first.
    private var realms: [RealmState] = []

    private struct RealmState: Sendable {
        var challenge: SIPDigestChallenge
        var qop: SIPDigestQOP?
        /// The last nc sent with `challenge.nonce`.
        var nonceCount: UInt32
        /// The nc of the last answer to a challenge (not a reuse; nil without qop), to
        /// tell whether a request that was challenged carried that answer.
        var answeredCount: UInt32?
        /// Stale challenges answered in a row after such answers.
        var staleAnswers: Int
    }

    /// A client for `username` and `password`. Throws `invalidConfiguration` for an empty
    /// username or one with a control character (it could not be written into a header).
    public init(username: String, password: String) throws(SIPDigestError) {
        guard !username.isEmpty else { throw SIPDigestError(.invalidConfiguration, "empty username") }
        guard !username.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw SIPDigestError(.invalidConfiguration, "username holds a control character")
        }
        self.username = username
        self.password = password
    }

    /// Never shows the password.
    public var description: String { "SIPDigestClient(username: \"\(SIPDigestError.printable(username))\", realms: \(realms.count))" }

    /// Never shows the password either (`dump`, debuggers).
    public var customMirror: Mirror { Mirror(self, children: ["username": username, "realms": knownRealms]) }

    /// The realms a nonce is remembered for, least recently used first.
    public var knownRealms: [String] { realms.map(\.challenge.realm) }

    /// Answers the WWW-Authenticate or Proxy-Authenticate values of a 401 or 407 (the text
    /// after the colon, one per header field): values of other schemes are skipped, as are
    /// values that do not parse when others do; then as ``answer(challenges:method:requestURI:body:previous:using:)``.
    /// Throws `inputTooLarge` for more than `SIPDigestLimits.maxHeaderValues` values and
    /// `noUsableChallenge` (naming the first problem) when no Digest challenge parses.
    public mutating func answer(
        challengeValues: [String], method: String, requestURI: String, body: [UInt8] = [],
        previous: [SIPDigestCredentials] = [], using generator: inout some RandomNumberGenerator
    ) throws(SIPDigestError) -> [SIPDigestCredentials] {
        guard challengeValues.count <= SIPDigestLimits.maxHeaderValues else {
            throw SIPDigestError(.inputTooLarge, "\(challengeValues.count) challenges, more than the \(SIPDigestLimits.maxHeaderValues) read")
        }
        var challenges: [SIPDigestChallenge] = []
        var firstProblem: SIPDigestError?
        for value in challengeValues {
            do {
                challenges.append(try SIPDigestChallenge(parsing: value))
            } catch {
                if firstProblem == nil { firstProblem = error }
            }
        }
        guard !challenges.isEmpty else {
            throw SIPDigestError(.noUsableChallenge, "no Digest challenge could be read" + (firstProblem.map { " (\($0))" } ?? ""))
        }
        return try answer(challenges: challenges, method: method, requestURI: requestURI, body: body, previous: previous, using: &generator)
    }

    /// Answers the challenges of a 401 or 407: one credentials per realm, in the order the
    /// realms first appear, each for the strongest challenge of its realm that can be
    /// answered (``SIPDigestChallenge/strongest(_:)``) with qop `auth` when offered, else
    /// `auth-int` (hashing `body`), else the RFC 2069 form.
    ///
    /// `previous` holds the credentials the challenged request carried, if any: that is how
    /// the client tells a stale nonce (answered again) from a refused password. Throws
    /// `noUsableChallenge` when a realm has no challenge it can answer, `credentialsRefused`
    /// or `staleRetriesExhausted` as the type explains, and `invalidParameter` for a method
    /// that is not a token or a Request-URI with whitespace or control characters. Nothing
    /// is remembered when it throws.
    public mutating func answer(
        challenges: [SIPDigestChallenge], method: String, requestURI: String, body: [UInt8] = [],
        previous: [SIPDigestCredentials] = [], using generator: inout some RandomNumberGenerator
    ) throws(SIPDigestError) -> [SIPDigestCredentials] {
        try Self.checkRequest(method: method, requestURI: requestURI)
        var realmOrder: [String] = []
        var byRealm: [String: [SIPDigestChallenge]] = [:]
        for challenge in challenges {
            if byRealm[challenge.realm] == nil { realmOrder.append(challenge.realm) }
            byRealm[challenge.realm, default: []].append(challenge)
        }
        guard !realmOrder.isEmpty else { throw SIPDigestError(.noUsableChallenge, "no challenge to answer") }

        var updated = realms
        var credentials: [SIPDigestCredentials] = []
        for realm in realmOrder {
            let offered = byRealm[realm] ?? []
            guard let challenge = SIPDigestChallenge.strongest(offered) else {
                let reason = offered.first?.unanswerableReason.map { " (\($0.reason))" } ?? ""
                throw SIPDigestError(.noUsableChallenge, "no challenge of realm \"\(SIPDigestError.printable(realm))\" can be answered" + reason)
            }
            let existing = updated.firstIndex { $0.challenge.realm == realm }
            let state = existing.map { updated[$0] }
            var staleAnswers = 0
            if let carried = previous.first(where: { $0.realm == realm }) {
                let wasAnswer = state.map { carried.nonce == $0.challenge.nonce && carried.nonceCount == $0.answeredCount } ?? true
                if challenge.stale {
                    if wasAnswer { staleAnswers = (state?.staleAnswers ?? 0) + 1 }
                    guard staleAnswers <= SIPDigestLimits.maxStaleRetries else {
                        throw SIPDigestError(.staleRetriesExhausted, "realm \"\(SIPDigestError.printable(realm))\" answered stale=true \(staleAnswers) times in a row")
                    }
                } else if wasAnswer {
                    throw SIPDigestError(.credentialsRefused, "realm \"\(SIPDigestError.printable(realm))\" refused the username and password of \"\(SIPDigestError.printable(username))\"")
                }
            }
            // The same nonce again (some servers re-challenge without a new one): carry on
            // counting, since nc 1 with that nonce would look like a replay.
            var nonceCount: UInt32 = 1
            if let state, state.challenge.nonce == challenge.nonce {
                let (next, overflow) = state.nonceCount.addingReportingOverflow(1)
                guard !overflow else { throw SIPDigestError(.invalidParameter, "nonce count of realm \"\(SIPDigestError.printable(realm))\" exhausted") }
                nonceCount = next
            }
            let qop = try challenge.preferredQOP()
            let answer = try makeCredentials(challenge: challenge, qop: qop, nonceCount: nonceCount,
                                             method: method, requestURI: requestURI, body: body, generator: &generator)
            let newState = RealmState(challenge: challenge, qop: qop, nonceCount: nonceCount,
                                      answeredCount: qop == nil ? nil : nonceCount, staleAnswers: staleAnswers)
            if let existing { updated.remove(at: existing) }
            updated.append(newState)
            credentials.append(answer)
        }
        if updated.count > SIPDigestLimits.maxRealms { updated.removeFirst(updated.count - SIPDigestLimits.maxRealms) }
        realms = updated
        return credentials
    }

    /// Credentials for a new request to `realm` without waiting for a challenge (RFC 3261
    /// §22.3 lets a client reuse them), with the last nonce answered for that realm and the
    /// next nc. Nil when no nonce is known for the realm, when that nonce came without a
    /// qop (RFC 2069 credentials have no nc, so reusing them is a replay), or when its
    /// nonce count is used up. If the nonce has expired the server answers stale=true and
    /// ``answer(challenges:method:requestURI:body:previous:using:)`` handles it.
    public mutating func credentials(
        forRealm realm: String, method: String, requestURI: String, body: [UInt8] = [],
        using generator: inout some RandomNumberGenerator
    ) throws(SIPDigestError) -> SIPDigestCredentials? {
        try Self.checkRequest(method: method, requestURI: requestURI)
        guard let index = realms.firstIndex(where: { $0.challenge.realm == realm }) else { return nil }
        var state = realms[index]
        guard state.qop != nil else { return nil }
        let (next, overflow) = state.nonceCount.addingReportingOverflow(1)
        guard !overflow else {
            realms.remove(at: index)
            return nil
        }
        let credentials = try makeCredentials(challenge: state.challenge, qop: state.qop, nonceCount: next,
                                              method: method, requestURI: requestURI, body: body, generator: &generator)
        state.nonceCount = next
        realms.remove(at: index)
        realms.append(state)
        return credentials
    }

    /// Forgets the nonce of `realm` (after a configuration change, say).
    public mutating func forget(realm: String) {
        realms.removeAll { $0.challenge.realm == realm }
    }

    private func makeCredentials(
        challenge: SIPDigestChallenge, qop: SIPDigestQOP?, nonceCount: UInt32,
        method: String, requestURI: String, body: [UInt8], generator: inout some RandomNumberGenerator
    ) throws(SIPDigestError) -> SIPDigestCredentials {
        let algorithm = challenge.effectiveAlgorithm
        // A cnonce travels only with a qop; -sess without qop was refused as unanswerable.
        let cnonce = qop == nil ? nil : Self.cnonce(using: &generator)
        let response = try SIPDigestResponse.compute(
            algorithm: algorithm, username: username, realm: challenge.realm, password: password,
            nonce: challenge.nonce, method: method, uri: requestURI, qop: qop,
            nonceCount: qop == nil ? nil : nonceCount, cnonce: cnonce, body: body)
        return SIPDigestCredentials(
            username: username, realm: challenge.realm, nonce: challenge.nonce, uri: requestURI, response: response,
            algorithm: challenge.algorithm, cnonce: cnonce, opaque: challenge.opaque, qop: qop,
            nonceCount: qop == nil ? nil : nonceCount)
    }

    /// 128 random bits as 32 hex digits: unpredictable to the server, so a hostile one
    /// cannot choose the whole hashed text (RFC 7616 §5.10), and a token in any header.
    private static func cnonce(using generator: inout some RandomNumberGenerator) -> String {
        var bytes: [UInt8] = []
        for _ in 0..<2 {
            let word = generator.next()
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        return SIPDigestHash.lowercaseHex(bytes)
    }

    private static func checkRequest(method: String, requestURI: String) throws(SIPDigestError) {
        guard !method.isEmpty, method.utf8.allSatisfy(SIPDigestParameterList.isTokenByte) else {
            throw SIPDigestError(.invalidParameter, "method \"\(SIPDigestError.printable(method))\" is not a token")
        }
        guard !requestURI.isEmpty, !requestURI.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw SIPDigestError(.invalidParameter, "Request-URI \"\(SIPDigestError.printable(requestURI))\" is empty or holds whitespace or control characters")
        }
    }
}
