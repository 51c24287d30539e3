import ParleyWireCore

/// Checks a signed request: a backend checks Parley's callbacks with it, and Parley checks
/// signed REST requests. See docs/backend.md, "Signature verification".
///
/// A request passes when its `Authorization` is `Application {key}:{signature}` for a key
/// the verifier knows (scheme in any case), its `Content-MD5`, when sent, is the Base64 MD5
/// of the body received, the signature matches the string to sign rebuilt from the request
/// as received (compared in constant time), and its `x-timestamp` is within the replay
/// window of now, either way.
///
/// The replay window only bounds how long a captured request stays usable; within it an
/// identical request verifies again. Callbacks carry a call id and are idempotent per
/// call and event, so a backend that must refuse exact repeats keeps the signatures it saw
/// for the window's length.
public struct SinchRequestVerifier: Sendable {
    /// Parley's replay window: 15 minutes either side of now, wide enough for hosts whose
    /// clocks drift by minutes, narrow enough that a captured request soon stops working.
    public static let defaultReplayWindowSeconds: Int64 = 15 * 60
    /// The longest `Authorization` header read.
    public static let maxAuthorizationBytes = 1024

    private let applications: [String: SinchApplicationCredentials]
    /// How far `x-timestamp` may be from now, in seconds, either way.
    public let replayWindowSeconds: Int64

    /// A verifier that knows `applications` (one, for a backend; every application, for parleyd).
    public init(applications: [SinchApplicationCredentials], replayWindowSeconds: Int64 = Self.defaultReplayWindowSeconds) {
        var table: [String: SinchApplicationCredentials] = [:]
        for application in applications { table[application.applicationKey] = application }
        self.applications = table
        self.replayWindowSeconds = max(0, replayWindowSeconds)
    }

    /// Verifies one request and returns the application key it was signed with.
    ///
    /// - Parameters:
    ///   - method: the HTTP method as received (`POST`).
    ///   - path: the request target as received, without scheme and host.
    ///   - headers: the request's header fields; names are matched without regard to case,
    ///     and `Authorization`, `x-timestamp`, `Content-Type` and `Content-MD5` may each
    ///     appear once.
    ///   - body: the body bytes as received.
    ///   - now: the verifier's wall-clock time.
    public func verify(method: String, path: String, headers: [(name: String, value: String)], body: [UInt8],
                       now: SinchTimestamp) throws(VoiceAPIError) -> String {
        let authorization = try Self.single("authorization", in: headers)
        let timestampText = try Self.single("x-timestamp", in: headers)
        let contentType = try Self.single("content-type", in: headers) ?? ""
        let sentMD5 = try Self.single("content-md5", in: headers)

        guard let authorization else {
            throw VoiceAPIError(.malformedAuthorization, field: "Authorization", "is missing")
        }
        let (key, signature) = try Self.parseAuthorization(authorization)
        guard let application = applications[key] else {
            throw VoiceAPIError(.unknownApplication, field: "Authorization", "no application has the key \(FieldReader.quoted(key))")
        }
        guard let timestampText else {
            throw VoiceAPIError(.missingTimestamp, field: "x-timestamp", "is missing")
        }
        let timestamp: SinchTimestamp
        do throws(VoiceAPIError) {
            timestamp = try SinchTimestamp(parsing: timestampText)
        } catch {
            throw VoiceAPIError(.invalidTimestamp, field: "x-timestamp", error.reason)
        }

        // A body is signed by its MD5 whether or not the header was sent; a request without
        // a body signs an empty line, or the header's value when it is the empty body's MD5.
        var md5Line = ""
        if !body.isEmpty || !(sentMD5 ?? "").isEmpty {
            let actual = try SinchSignature.contentMD5(of: body)
            if let sentMD5, !sentMD5.isEmpty, sentMD5 != actual {
                throw VoiceAPIError(.bodyDigestMismatch, field: "Content-MD5",
                                    "\(FieldReader.quoted(sentMD5)) is not the MD5 of the \(body.count)-byte body (\(actual))")
            }
            md5Line = actual
        }
        let stringToSign = SinchSignature.stringToSign(method: method, contentMD5: md5Line, contentType: contentType,
                                                       timestamp: timestampText, path: path)
        let expected = try SinchSignature.signature(stringToSign, secret: application.secret)
        guard SinchSignature.constantTimeEqual(expected, signature) else {
            throw VoiceAPIError(.badSignature, field: "Authorization", "the signature does not match the request")
        }
        let distance = timestamp.unixSeconds > now.unixSeconds
            ? timestamp.unixSeconds - now.unixSeconds : now.unixSeconds - timestamp.unixSeconds
        guard distance <= replayWindowSeconds else {
            throw VoiceAPIError(.staleTimestamp, field: "x-timestamp",
                                "\(timestamp) is \(distance) s from now (\(now)), more than the \(replayWindowSeconds) s allowed")
        }
        return key
    }

    /// The application key an `Authorization: Application {key}:{signature}` value names,
    /// so a server with many applications can look up the one secret to verify with; nil
    /// when the value is not of that form.
    public static func applicationKey(inAuthorization value: String) -> String? {
        try? parseAuthorization(value).key
    }

    /// The value of the header `lowercasedName`, nil when absent; refused when it appears twice.
    private static func single(_ lowercasedName: String, in headers: [(name: String, value: String)]) throws(VoiceAPIError) -> String? {
        var found: String?
        for header in headers where ASCIICase.equal(header.name, lowercasedName) {
            guard found == nil else {
                throw VoiceAPIError(.malformedAuthorization, field: lowercasedName, "appears more than once")
            }
            found = header.value
        }
        return found.map(Self.trimmed)
    }

    private static func trimmed(_ text: String) -> String {
        var bytes = Substring(text).utf8[...]
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
        return String(Substring(bytes))
    }

    /// Splits `Application {key}:{signature}` into the key and the decoded signature.
    static func parseAuthorization(_ value: String) throws(VoiceAPIError) -> (key: String, signature: [UInt8]) {
        func refuse(_ why: String) -> VoiceAPIError {
            VoiceAPIError(.malformedAuthorization, field: "Authorization", why)
        }
        guard value.utf8.count <= maxAuthorizationBytes else { throw refuse("is longer than \(maxAuthorizationBytes) bytes") }
        let bytes = Array(value.utf8)
        guard let space = bytes.firstIndex(of: 0x20) else { throw refuse("expected \"Application {key}:{signature}\"") }
        let scheme = String(decoding: bytes[..<space], as: UTF8.self)
        guard ASCIICase.equal(scheme, SinchSignature.scheme) else {
            throw refuse("the scheme \(FieldReader.quoted(scheme)) is not Application")
        }
        var start = space
        while start < bytes.count, bytes[start] == 0x20 { start += 1 }
        let credentials = bytes[start...]
        guard let colon = credentials.lastIndex(of: UInt8(ascii: ":")) else {
            throw refuse("expected {key}:{signature} after the scheme")
        }
        let key = String(decoding: credentials[..<colon], as: UTF8.self)
        guard !key.isEmpty, key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw refuse("the application key is empty or holds spaces or control characters")
        }
        let signature: [UInt8]
        do throws(Base64Error) {
            signature = try Base64.decode(credentials[(colon + 1)...], url: false)
        } catch {
            throw refuse("the signature is not Base64: \(error.reason)")
        }
        guard signature.count == 32 else { throw refuse("the signature is \(signature.count) bytes, not HMAC-SHA256's 32") }
        return (key, signature)
    }
}
