import ParleyWireCore

/// Signs requests the way Sinch signs its callbacks: Parley signs every callback it POSTs
/// to a backend, and a backend (or a test) signs REST requests to Parley the same way.
/// See ``SinchSignature`` for the scheme and docs/backend.md, "Signature verification".
public struct SinchRequestSigner: Sendable {
    public let credentials: SinchApplicationCredentials

    public init(credentials: SinchApplicationCredentials) {
        self.credentials = credentials
    }

    /// Signs one request.
    ///
    /// - Parameters:
    ///   - method: the HTTP method in upper case (`POST`).
    ///   - path: the request target without scheme and host (`/sinch/callback/ace`),
    ///     with its query string if it has one.
    ///   - contentType: the `Content-Type` sent with a body, exactly as sent
    ///     (`application/json`); ignored when `body` is empty.
    ///   - body: the body bytes exactly as sent.
    ///   - timestamp: the time of signing, sent as `x-timestamp`.
    public func sign(method: String, path: String, contentType: String, body: [UInt8],
                     timestamp: SinchTimestamp) throws(VoiceAPIError) -> SignedRequest {
        guard !method.isEmpty, method.utf8.count <= 16, method.utf8.allSatisfy({ $0 >= 0x41 && $0 <= 0x5A }) else {
            throw VoiceAPIError(.invalidValue, field: "method", "\(FieldReader.quoted(method)) is not an HTTP method in upper case")
        }
        guard path.utf8.first == UInt8(ascii: "/"), path.utf8.count <= VoiceAPILimits.maxTextBytes,
              path.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw VoiceAPIError(.invalidValue, field: "path", "must start with '/' and hold only visible ASCII")
        }
        let hasBody = !body.isEmpty
        guard !hasBody || (!contentType.isEmpty && SinchSignature.isHeaderSafe(contentType)) else {
            throw VoiceAPIError(.invalidValue, field: "contentType", "a body needs a Content-Type of visible ASCII")
        }
        let contentMD5 = hasBody ? try SinchSignature.contentMD5(of: body) : ""
        let sentType = hasBody ? contentType : ""
        let timestampText = timestamp.text
        let stringToSign = SinchSignature.stringToSign(method: method, contentMD5: contentMD5, contentType: sentType,
                                                       timestamp: timestampText, path: path)
        let signature = Base64.encode(try SinchSignature.signature(stringToSign, secret: credentials.secret))
        return SignedRequest(authorization: "\(SinchSignature.scheme) \(credentials.applicationKey):\(signature)",
                             timestamp: timestampText,
                             contentMD5: hasBody ? contentMD5 : nil,
                             contentType: hasBody ? contentType : nil,
                             stringToSign: stringToSign)
    }
}
