import ParleyWireCore
/// A JWT in JWS compact serialization (RFC 7519 §3, RFC 7515 §7.1) signed with HS256,
/// parsed with strict checks but not yet verified.
///
/// ```text
/// BASE64URL(header JSON) "." BASE64URL(payload JSON) "." BASE64URL(HMAC-SHA256 signature)
/// ```
///
/// ``parse(_:)`` accepts only: at most ``maxLength`` bytes; exactly three non-empty parts
/// of base64url without padding (canonical, RFC 4648 §5); a header and payload that are
/// each one strict JSON object (no duplicate keys, valid UTF-8); `alg` exactly `HS256`
/// (RFC 7518 §3.2; `none` and every other algorithm are refused, whatever the key); no
/// `crit` (RFC 7515 §4.1.11: no extension is understood); `typ`, if present, `JWT`; a
/// 32-byte signature. It never traps and never allocates more than a few times the
/// input's size.
public struct JSONWebToken: Sendable, Hashable {
    /// The largest token accepted, in bytes (as `hello.token`, docs/protocol.md "Limits").
    public static let maxLength = 8192

    /// The header's `kid` (key id), if any.
    public let keyID: String?
    /// The decoded payload: the JSON claims set as it was signed.
    public let payload: [UInt8]
    /// The signature (32 bytes).
    public let signature: [UInt8]
    /// The bytes the signature covers: the first two parts and the dot between them
    /// (RFC 7515 §5.1 step 8), as ASCII.
    public let signingInput: [UInt8]

    let header: JSONObject
    let claims: JSONObject

    /// Parses a compact JWS and checks everything that needs no key (see the type's comment).
    public static func parse(_ token: String) throws(AuthError) -> JSONWebToken {
        let bytes = Array(token.utf8)
        guard bytes.count <= maxLength else {
            throw AuthError(.malformed, field: "token", "token of \(bytes.count) bytes exceeds the limit of \(maxLength) bytes")
        }
        guard !bytes.isEmpty else { throw AuthError(.malformed, field: "token", offset: 0, "the token is empty") }
        var dots: [Int] = []
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: ".") {
            guard dots.count < 2 else {
                throw AuthError(.malformed, field: "token", offset: index, "more than three parts (a JWE or a JWS JSON serialization?)")
            }
            dots.append(index)
        }
        guard dots.count == 2 else {
            throw AuthError(.malformed, field: "token", offset: bytes.count,
                            "\(dots.count + 1) part\(dots.count == 0 ? "" : "s") where a compact JWS has three, joined by '.'")
        }
        let headerText = bytes[0..<dots[0]]
        let payloadText = bytes[(dots[0] + 1)..<dots[1]]
        let signatureText = bytes[(dots[1] + 1)...]

        let header = try readObject(try decodePart(headerText, field: "header"), field: "header")
        guard let algorithmValue = header["alg"] else {
            throw AuthError(.malformed, field: "alg", "the header has no \"alg\"")
        }
        guard case .string(let algorithm) = algorithmValue else {
            throw AuthError(.malformed, field: "alg", "\"alg\" is \(Self.typeName(algorithmValue)), not a string")
        }
        guard algorithm == "HS256" else {
            throw AuthError(.unsupportedAlgorithm, field: "alg", "algorithm \"\(AuthError.printable(algorithm))\" is not accepted; only HS256 is")
        }
        if header["crit"] != nil {
            throw AuthError(.malformed, field: "crit", "the header lists critical extensions (\"crit\"), none of which are supported")
        }
        if let typeValue = header["typ"] {
            guard case .string(let type) = typeValue, type.lowercased() == "jwt" || type.lowercased() == "application/jwt" else {
                throw AuthError(.malformed, field: "typ", "\"typ\" must be \"JWT\" when present")
            }
        }
        var keyID: String? = nil
        if let keyValue = header["kid"] {
            guard case .string(let kid) = keyValue else {
                throw AuthError(.malformed, field: "kid", "\"kid\" is \(Self.typeName(keyValue)), not a string")
            }
            keyID = kid
        }
        let payload = try decodePart(payloadText, field: "payload")
        let claims = try readObject(payload, field: "payload")
        let signature = try decodePart(signatureText, field: "signature")
        guard signature.count == 32 else {
            throw AuthError(.malformed, field: "signature", offset: dots[1] + 1,
                            "signature of \(signature.count) bytes; an HS256 signature has 32")
        }
        return JSONWebToken(keyID: keyID, payload: payload, signature: signature,
                            signingInput: Array(bytes[0..<dots[1]]), header: header, claims: claims)
    }

    /// The deepest nesting a header or claims set may have (docs/auth.md).
    static let maxJSONDepth = 16

    /// Reads `bytes` as exactly one strict JSON object (``StrictJSONParser``); errors are
    /// `malformed`, naming `field` and the byte offset within the decoded JSON.
    private static func readObject(_ bytes: [UInt8], field: String) throws(AuthError) -> JSONObject {
        // UTF-8 is checked first so that its refusal reads the same whatever the JSON around it.
        var validator = UTF8Validator()
        if let bad = validator.validate(bytes) {
            throw AuthError(.malformed, field: field, offset: bad, "invalid UTF-8 in the decoded JSON")
        }
        guard validator.isAtBoundary else {
            throw AuthError(.malformed, field: field, offset: bytes.count, "the decoded JSON ends inside a UTF-8 sequence")
        }
        let value: JSONValue
        do {
            value = try StrictJSONParser.parse(bytes, maxDepth: maxJSONDepth)
        } catch {
            let reason: String
            switch error.kind {
            case .duplicateKey(let key): reason = "duplicate member \"\(AuthError.printable(key))\""
            case .tooDeep: reason = "nesting deeper than \(maxJSONDepth) levels"
            case .syntax: reason = error.reason
            }
            throw AuthError(.malformed, field: field, offset: error.offset, "invalid JSON: " + reason)
        }
        guard case .object(let object) = value else {
            let start = bytes.firstIndex { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } ?? 0
            throw AuthError(.malformed, field: field, offset: start, "invalid JSON: expected a JSON object")
        }
        return object
    }

    /// The value's JSON type with its article, for refusals ("\"kid\" is a number, not a string").
    static func typeName(_ value: JSONValue) -> String {
        switch value {
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        case .array: "an array"
        case .object: "an object"
        }
    }

    private static func decodePart(_ text: ArraySlice<UInt8>, field: String) throws(AuthError) -> [UInt8] {
        guard !text.isEmpty else {
            throw AuthError(.malformed, field: field, offset: text.startIndex, "the \(field) part is empty")
        }
        do {
            return try Base64.decode(text, url: true)
        } catch {
            throw AuthError(.malformed, field: field, error)
        }
    }

    /// Checks the signature with `key`, comparing in constant time (RFC 7515 §5.2 step 8).
    /// Throws `badSignature` if it does not match.
    public func verifyHS256(key: [UInt8]) throws(AuthError) {
        let expected = try AuthCrypto.hmacSHA256(key: key, signingInput)
        guard AuthCrypto.constantTimeEqual(expected, signature) else {
            throw AuthError(.badSignature, field: "signature", "the signature does not match the key")
        }
    }

    /// Signs a header and payload (each the exact JSON bytes to carry) with HS256 and
    /// returns the compact token. The caller writes the JSON; ``parse(_:)`` reads it back.
    public static func signHS256(headerJSON: [UInt8], payloadJSON: [UInt8], key: [UInt8]) throws(AuthError) -> String {
        let input = Array((Base64.encodeURL(headerJSON) + "." + Base64.encodeURL(payloadJSON)).utf8)
        let signature = try AuthCrypto.hmacSHA256(key: key, input)
        return String(decoding: input, as: UTF8.self) + "." + Base64.encodeURL(signature)
    }
}
