/// The headers that carry a signed request, as ``SinchRequestSigner`` computes them.
public struct SignedRequest: Sendable, Hashable {
    /// The `Authorization` value: `Application {key}:{Base64 signature}`.
    public let authorization: String
    /// The `x-timestamp` value, ISO 8601 in UTC.
    public let timestamp: String
    /// The `Content-MD5` value (Base64 of the body's MD5), nil for an empty body.
    public let contentMD5: String?
    /// The `Content-Type` value, nil for an empty body.
    public let contentType: String?
    /// The exact text that was signed, for logs and for backend authors checking theirs.
    public let stringToSign: String

    /// The headers to send, in this order: `Content-Type` and `Content-MD5` when there is
    /// a body, then `x-timestamp` and `Authorization`.
    public var headerFields: [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        if let contentType { fields.append(("Content-Type", contentType)) }
        if let contentMD5 { fields.append(("Content-MD5", contentMD5)) }
        fields.append(("x-timestamp", timestamp))
        fields.append(("Authorization", authorization))
        return fields
    }
}
