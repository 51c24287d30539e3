import ParleyWireCore

/// Application key and secret from an HTTP `Authorization: Basic` header (RFC 7617), the
/// way the REST API authenticates, as the Sinch REST API allows.
///
/// ```text
/// Authorization: Basic base64("{applicationKey}:{secret}")
/// ```
///
/// Check them with ``ApplicationCredentials/authenticate(_:now:)``. `description` hides
/// the secret.
public struct BasicCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The longest header value accepted, in bytes.
    public static let maxHeaderLength = 1024

    /// The user-id part: the application key.
    public let applicationKey: String
    /// The password part: the application secret as Base64 text.
    public let secret: String

    public init(applicationKey: String, secret: String) {
        self.applicationKey = applicationKey
        self.secret = secret
    }

    /// Parses an `Authorization` header value: the scheme `Basic` (any case), one or more
    /// spaces, strict Base64 of UTF-8 `key:secret` split at the first colon. Surrounding
    /// spaces and tabs are ignored. Throws `malformedCredentials` naming the offset in
    /// `value`, or `badCredentials` when the key is not a valid application key.
    public static func parse(authorization value: String) throws(AuthError) -> BasicCredentials {
        let bytes = Array(value.utf8)
        guard bytes.count <= maxHeaderLength else {
            throw AuthError(.malformedCredentials, field: "authorization", "header of \(bytes.count) bytes exceeds \(maxHeaderLength)")
        }
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
        var start = 0
        var end = bytes.count
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        let scheme = Array("basic".utf8)
        guard end - start > scheme.count,
              zip(bytes[start..<(start + scheme.count)], scheme).allSatisfy({ $0 | 0x20 == $1 }),
              bytes[start + scheme.count] == 0x20 else {
            throw AuthError(.malformedCredentials, field: "authorization", offset: start, "expected \"Basic \" followed by credentials")
        }
        var tokenStart = start + scheme.count
        while tokenStart < end, bytes[tokenStart] == 0x20 { tokenStart += 1 }
        let decoded: [UInt8]
        do throws(AuthError) {
            guard tokenStart < end else {
                throw AuthError(.invalidValue, offset: tokenStart, "the credentials are empty")
            }
            do { decoded = try Base64.decode(bytes[tokenStart..<end], url: false) } catch { throw AuthError(.invalidValue, field: nil, error) }
        } catch {
            throw error.recast(.malformedCredentials, field: "authorization")
        }
        guard let text = UTF8Validator.string(decoded) else {
            throw AuthError(.malformedCredentials, field: "authorization", "the decoded credentials are not UTF-8")
        }
        guard let colon = text.firstIndex(of: ":") else {
            throw AuthError(.malformedCredentials, field: "authorization", "the decoded credentials have no ':' between key and secret")
        }
        let key = String(text[..<colon])
        let secret = String(text[text.index(after: colon)...])
        guard ApplicationCredentials.isValidKey(key) else {
            throw AuthError(.badCredentials, field: "authorization", "\"\(AuthError.printable(key))\" is not an application key")
        }
        return BasicCredentials(applicationKey: key, secret: secret)
    }

    /// The `Authorization` header value for these credentials: `Basic ...`.
    public var authorizationValue: String {
        "Basic " + Base64.encode(Array((applicationKey + ":" + secret).utf8))
    }

    public var description: String { "BasicCredentials(\(applicationKey), secret redacted)" }
}
