/// Digest credentials: the value of an Authorization or Proxy-Authorization header field
/// (RFC 3261 §20.7, §22.2, §25.1 `digest-response`; RFC 8760 §2).
///
/// Parameters come in any order with case-insensitive names; unknown ones are ignored, a
/// known one given twice is an error.
public struct SIPDigestCredentials: Sendable, Hashable {
    public var username: String
    public var realm: String
    public var nonce: String
    /// The Request-URI the response was computed over (`uri`, RFC 3261's `digest-uri`).
    public var uri: String
    /// The response as hex (lower case when written by us).
    public var response: String
    /// The algorithm as named, nil if absent (MD5).
    public var algorithm: SIPDigestAlgorithm?
    public var cnonce: String?
    public var opaque: String?
    /// The qop the response was computed with, nil for RFC 2069 credentials.
    public var qop: SIPDigestQOP?
    /// The nonce count (`nc`), how many requests the client has sent with this nonce.
    public var nonceCount: UInt32?

    /// Credentials from their parts.
    public init(
        username: String, realm: String, nonce: String, uri: String, response: String,
        algorithm: SIPDigestAlgorithm? = nil, cnonce: String? = nil, opaque: String? = nil,
        qop: SIPDigestQOP? = nil, nonceCount: UInt32? = nil
    ) {
        self.username = username
        self.realm = realm
        self.nonce = nonce
        self.uri = uri
        self.response = response
        self.algorithm = algorithm
        self.cnonce = cnonce
        self.opaque = opaque
        self.qop = qop
        self.nonceCount = nonceCount
    }

    /// Reads a header value (the text after `Authorization:` or `Proxy-Authorization:`).
    ///
    /// Requires username, realm, nonce, uri and response; with a qop also cnonce and nc
    /// (RFC 7616 §3.4). `nc` must be exactly 8 hex digits and `response` hex. Throws
    /// `unsupportedScheme` for another scheme, `missingParameter`, `invalidParameter`,
    /// `duplicateParameter`, `malformed` or `inputTooLarge` otherwise.
    public init(parsing value: String) throws(SIPDigestError) {
        let list = try SIPDigestParameterList(parsing: value)
        username = try list.required("username")
        realm = try list.required("realm")
        nonce = try list.required("nonce")
        uri = try list.required("uri")
        response = try list.required("response")
        guard !response.isEmpty, response.utf8.allSatisfy({ SIPDigestHash.nibble($0) != nil }) else {
            throw SIPDigestError(.invalidParameter, offset: try list.parameter("response")?.offset,
                                 "response \"\(SIPDigestError.printable(response))\" is not hex")
        }
        algorithm = try list.parameter("algorithm").map { SIPDigestAlgorithm(token: $0.value) }
        cnonce = try list.parameter("cnonce")?.value
        opaque = try list.parameter("opaque")?.value
        if let qopParameter = try list.parameter("qop") {
            guard qopParameter.value.utf8.allSatisfy(SIPDigestParameterList.isTokenByte) else {
                throw SIPDigestError(.invalidParameter, offset: qopParameter.offset,
                                     "qop \"\(SIPDigestError.printable(qopParameter.value))\" is not one token")
            }
            qop = SIPDigestQOP(token: qopParameter.value)
        } else {
            qop = nil
        }
        if let ncParameter = try list.parameter("nc") {
            let digits = ncParameter.value
            guard digits.utf8.count == 8, digits.utf8.allSatisfy({ SIPDigestHash.nibble($0) != nil }),
                  let count = UInt32(digits, radix: 16) else {
                throw SIPDigestError(.invalidParameter, offset: ncParameter.offset,
                                     "nc \"\(SIPDigestError.printable(digits))\" is not 8 hex digits")
            }
            nonceCount = count
        } else {
            nonceCount = nil
        }
        if let qop {
            guard cnonce != nil else { throw SIPDigestError(.missingParameter, "qop \(SIPDigestError.printable(qop.token)) without a cnonce") }
            guard nonceCount != nil else { throw SIPDigestError(.missingParameter, "qop \(SIPDigestError.printable(qop.token)) without an nc") }
        }
    }

    /// The header value: `Digest username="...", realm="...", ...`, with quoted strings
    /// escaped and `algorithm`, `qop` and `nc` unquoted (RFC 7616 §3.4 forbids quoting
    /// them). Optional parameters are written only when set.
    ///
    /// Throws `invalidParameter` for a value a header cannot carry (a control character,
    /// an algorithm or qop name that is not a token).
    public func serialized() throws(SIPDigestError) -> String {
        var writer = SIPDigestHeaderWriter()
        try writer.quoted("username", username)
        try writer.quoted("realm", realm)
        try writer.quoted("nonce", nonce)
        try writer.quoted("uri", uri)
        try writer.quoted("response", response)
        if let algorithm { try writer.token("algorithm", algorithm.token) }
        if let cnonce { try writer.quoted("cnonce", cnonce) }
        if let opaque { try writer.quoted("opaque", opaque) }
        if let qop { try writer.token("qop", qop.token) }
        if let nonceCount { try writer.token("nc", SIPDigestResponse.nonceCountText(nonceCount)) }
        return writer.value
    }
}
