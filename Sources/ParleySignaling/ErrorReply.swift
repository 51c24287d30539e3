import ParleyWireCore
extension SignalingMessage {
    /// `error` (server to device): a request failed, or a frame could not be understood.
    /// The connection stays open unless a close frame follows (see the close codes).
    public struct ErrorReply: Sendable, Hashable {
        /// The failed request's id; absent when the frame's id could not be read, or when
        /// the error concerns the connection rather than one request.
        public var replyTo: String?
        /// What went wrong, machine-readable (an open set: unknown codes mean `internal_error`).
        public var code: SignalingErrorCode
        /// One line for humans and logs.
        public var message: String
        /// Path of the offending field, for `bad_request` and `too_large`.
        public var field: String?
        /// For `unsupported_version`: the protocol versions the server speaks.
        public var supportedVersions: [Int]

        public init(replyTo: String?, code: SignalingErrorCode, message: String, field: String? = nil, supportedVersions: [Int] = []) {
            self.replyTo = replyTo
            self.code = code
            self.message = message
            self.field = field
            self.supportedVersions = supportedVersions
        }

        init(_ reader: FieldReader) throws(SignalingError) {
            replyTo = try reader.optionalString("re", .requestID)
            code = SignalingErrorCode(rawValue: try reader.string("code", .errorCode))
            message = try reader.string("message", .message)
            field = try reader.optionalString("field", .fieldPath)
            var versions: [Int] = []
            for element in try reader.array("supported", maxCount: SignalingLimits.maxListCount) {
                versions.append(Int(try reader.checkedInteger(element.value, at: element.path, in: 1...65_535)))
            }
            supportedVersions = versions
        }

        func append(to object: inout JSONObject) {
            object.append("re", ifPresent: replyTo)
            object.append("code", code.rawValue)
            object.append("message", message)
            object.append("field", ifPresent: field)
            if !supportedVersions.isEmpty {
                object.append("supported", .array(supportedVersions.map { .number(String($0)) }))
            }
        }
    }
}
