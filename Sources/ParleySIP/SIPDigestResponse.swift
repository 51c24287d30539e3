/// The `response` of digest credentials (RFC 7616 §3.4.1 to §3.4.3, RFC 2617 §3.2.2.1 for
/// the RFC 2069 form without qop), the one computation client and server share.
///
/// With H the algorithm's hash as lowercase hex:
/// - A1 = `username:realm:password`, and for a `-sess` algorithm
///   H(A1) is replaced by H(`H(A1):nonce:cnonce`);
/// - A2 = `method:uri`, or `method:uri:H(body)` for qop `auth-int`;
/// - response = H(`H(A1):nonce:nc:cnonce:qop:H(A2)`) with a qop,
///   H(`H(A1):nonce:H(A2)`) without one.
public enum SIPDigestResponse {
    /// Computes the response as lowercase hex.
    ///
    /// `nonceCount` and `cnonce` are required with a `qop`, and `cnonce` with a `-sess`
    /// algorithm; `body` counts only for `auth-int` (an empty body is hashed as such).
    /// Throws `unsupportedAlgorithm` or `unsupportedQOP` for `.other` values and
    /// `missingParameter` when a value the computation needs is nil.
    public static func compute(
        algorithm: SIPDigestAlgorithm,
        username: String,
        realm: String,
        password: String,
        nonce: String,
        method: String,
        uri: String,
        qop: SIPDigestQOP?,
        nonceCount: UInt32?,
        cnonce: String?,
        body: [UInt8] = []
    ) throws(SIPDigestError) -> String {
        guard let hash = SIPDigestHash.cryptoAlgorithm(algorithm) else {
            throw SIPDigestError(.unsupportedAlgorithm, "algorithm \"\(SIPDigestError.printable(algorithm.token))\" is not supported")
        }
        var ha1 = try SIPDigestHash.hex(hash, joining: [username, realm, password])
        if algorithm.isSession {
            guard let cnonce else { throw SIPDigestError(.missingParameter, "algorithm \(algorithm.token) needs a cnonce") }
            ha1 = try SIPDigestHash.hex(hash, joining: [ha1, nonce, cnonce])
        }
        let ha2: String
        switch qop {
        case .authInt:
            ha2 = try SIPDigestHash.hex(hash, joining: [method, uri, try SIPDigestHash.hex(hash, body)])
        case .auth, nil:
            ha2 = try SIPDigestHash.hex(hash, joining: [method, uri])
        case .other(let token):
            throw SIPDigestError(.unsupportedQOP, "qop \"\(SIPDigestError.printable(token))\" is not supported")
        }
        guard let qop else {
            return try SIPDigestHash.hex(hash, joining: [ha1, nonce, ha2])
        }
        guard let nonceCount, let cnonce else {
            throw SIPDigestError(.missingParameter, "qop \(qop.token) needs a nonce count and a cnonce")
        }
        return try SIPDigestHash.hex(hash, joining: [ha1, nonce, nonceCountText(nonceCount), cnonce, qop.token, ha2])
    }

    /// The `nc` value as written on the wire: 8 lowercase hex digits.
    public static func nonceCountText(_ count: UInt32) -> String {
        let digits = String(count, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
