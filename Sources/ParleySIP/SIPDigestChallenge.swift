/// A Digest challenge: the value of a WWW-Authenticate (401) or Proxy-Authenticate (407)
/// header field (RFC 3261 §20.44, §22.1, §25.1 `digest-cln`; RFC 8760 §2).
///
/// Parameters come in any order with case-insensitive names; unknown ones are ignored, a
/// known one given twice is an error. A server may send several challenges, one per
/// algorithm (RFC 8760 §2.3); ``strongest(_:)`` picks the one to answer.
public struct SIPDigestChallenge: Sendable, Hashable {
    /// The protection space, shown to users and hashed into the response.
    public var realm: String
    /// The URIs the same credentials are good for (`domain`, space-separated); empty if absent.
    public var domain: [String]
    /// The server's nonce, opaque to the client.
    public var nonce: String
    /// A value the client echoes unchanged, if the server sent one.
    public var opaque: String?
    /// True if the previous credentials were right but their nonce had expired: retry with
    /// the same password, without asking the user.
    public var stale: Bool
    /// The algorithm as named, nil if absent (which means MD5, RFC 3261 §25.1).
    public var algorithm: SIPDigestAlgorithm?
    /// The qop values offered, in the server's order; empty if the server sent none (an
    /// RFC 2069 server, which RFC 3261 §22.4 still has clients answer).
    public var qopOptions: [SIPDigestQOP]

    /// A challenge from its parts.
    public init(
        realm: String, nonce: String, algorithm: SIPDigestAlgorithm? = nil, qopOptions: [SIPDigestQOP] = [.auth],
        stale: Bool = false, opaque: String? = nil, domain: [String] = []
    ) {
        self.realm = realm
        self.domain = domain
        self.nonce = nonce
        self.opaque = opaque
        self.stale = stale
        self.algorithm = algorithm
        self.qopOptions = qopOptions
    }

    /// Reads a header value (the text after `WWW-Authenticate:` or `Proxy-Authenticate:`).
    ///
    /// Throws `unsupportedScheme` for another scheme (skip it), `missingParameter` without
    /// realm or nonce, `invalidParameter` for a `stale` that is neither true nor false or
    /// an empty qop list, and `malformed` or `inputTooLarge` for bad or oversized input.
    public init(parsing value: String) throws(SIPDigestError) {
        let list = try SIPDigestParameterList(parsing: value)
        realm = try list.required("realm")
        nonce = try list.required("nonce")
        opaque = try list.parameter("opaque")?.value
        if let domainText = try list.parameter("domain")?.value {
            domain = domainText.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        } else {
            domain = []
        }
        if let staleParameter = try list.parameter("stale") {
            switch staleParameter.value.lowercased() {
            case "true": stale = true
            case "false": stale = false
            default:
                throw SIPDigestError(.invalidParameter, offset: staleParameter.offset,
                                     "stale is \"\(SIPDigestError.printable(staleParameter.value))\", not true or false")
            }
        } else {
            stale = false
        }
        algorithm = try list.parameter("algorithm").map { SIPDigestAlgorithm(token: $0.value) }
        if let qopParameter = try list.parameter("qop") {
            let options = qopParameter.value.split(separator: ",")
                .map { $0.trimmingWhitespace() }
                .filter { !$0.isEmpty }
                .map { SIPDigestQOP(token: $0) }
            guard !options.isEmpty else {
                throw SIPDigestError(.invalidParameter, offset: qopParameter.offset, "qop lists no option")
            }
            qopOptions = options
        } else {
            qopOptions = []
        }
    }

    /// The header value: `Digest realm="...", nonce="...", ...`, with quoted strings escaped
    /// (`algorithm` and `stale` unquoted, `qop` quoted, as RFC 3261 §25.1 writes them).
    /// `stale` is written only when true, `domain`, `opaque` and `algorithm` only when set.
    ///
    /// Throws `invalidParameter` for a value a header cannot carry (a control character,
    /// an algorithm or qop name that is not a token).
    public func serialized() throws(SIPDigestError) -> String {
        var writer = SIPDigestHeaderWriter()
        try writer.quoted("realm", realm)
        if !domain.isEmpty { try writer.quoted("domain", domain.joined(separator: " ")) }
        try writer.quoted("nonce", nonce)
        if let opaque { try writer.quoted("opaque", opaque) }
        if stale { try writer.token("stale", "true") }
        if let algorithm { try writer.token("algorithm", algorithm.token) }
        if !qopOptions.isEmpty {
            for option in qopOptions { try SIPDigestHeaderWriter.checkToken("qop", option.token) }
            try writer.quoted("qop", qopOptions.map(\.token).joined(separator: ","))
        }
        return writer.value
    }

    /// The algorithm to compute with: the one named, or MD5 when none is.
    public var effectiveAlgorithm: SIPDigestAlgorithm { algorithm ?? .md5 }

    /// The qop a client answers with: `auth` when offered (RFC 3261 §22.4 and RFC 7616
    /// prefer it: a proxy may change the body), else `auth-int`; nil without qop options.
    /// Throws `unsupportedQOP` when every option is unknown.
    public func preferredQOP() throws(SIPDigestError) -> SIPDigestQOP? {
        if qopOptions.isEmpty { return nil }
        if qopOptions.contains(.auth) { return .auth }
        if qopOptions.contains(.authInt) { return .authInt }
        throw SIPDigestError(.unsupportedQOP, "qop options \(qopOptions.map(\.token)) hold neither auth nor auth-int")
    }

    /// Why this challenge cannot be answered, nil if it can: an unknown algorithm, only
    /// unknown qop options, or a `-sess` algorithm without qop (its cnonce would have no
    /// parameter to travel in).
    public var unanswerableReason: SIPDigestError? {
        guard effectiveAlgorithm.isSupported else {
            return SIPDigestError(.unsupportedAlgorithm, "realm \"\(SIPDigestError.printable(realm))\": algorithm \"\(SIPDigestError.printable(effectiveAlgorithm.token))\" is not supported")
        }
        do {
            let qop = try preferredQOP()
            if qop == nil && effectiveAlgorithm.isSession {
                return SIPDigestError(.unsupportedQOP, "realm \"\(SIPDigestError.printable(realm))\": algorithm \(effectiveAlgorithm.token) needs a qop")
            }
        } catch {
            return error
        }
        return nil
    }

    /// The challenge to answer among several: the answerable one with the strongest hash
    /// (SHA-512-256, then SHA-256, then MD5), the earlier one on a tie; nil if none can be
    /// answered. Pass the challenges of one realm (``SIPDigestClient`` groups them).
    ///
    /// RFC 8760 §2.4 has a client use the topmost challenge it supports "unless a local
    /// policy dictates otherwise". This is such a policy: header fields carry no integrity
    /// protection, so an attacker on the path who reorders them could otherwise move MD5
    /// to the top (the downgrade its §3 warns of). Where strength ties, the server's order
    /// still decides.
    public static func strongest(_ challenges: [SIPDigestChallenge]) -> SIPDigestChallenge? {
        var best: (challenge: SIPDigestChallenge, strength: Int)?
        for challenge in challenges where challenge.unanswerableReason == nil {
            guard let strength = challenge.effectiveAlgorithm.strength else { continue }
            if let current = best, strength <= current.strength { continue }
            best = (challenge, strength)
        }
        return best?.challenge
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    fileprivate func trimmingWhitespace() -> String {
        var slice = self[...]
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }
}
