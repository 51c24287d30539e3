/// Why a frame could not be decoded into a `SignalingMessage`, and where.
///
/// Carries what a server needs to answer with an `error` frame (`code`, `requestID` for
/// `re`, `field`, `supportedVersions`; see `SignalingCodec.errorReply(for:)`) and a one-line
/// `description` such as
/// `field "headers" of call.start: total size 1500 bytes exceeds 1024`.
public struct SignalingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The wire error code: `malformed`, `bad_request`, `unsupported_version`, `unknown_type` or `too_large`.
    public let code: SignalingErrorCode
    /// Path of the offending field, e.g. `headers`, `to.address`, `media.iceServers[0].urls[1]`.
    public let field: String?
    /// Byte offset in the frame, for `malformed` frames.
    public let offset: Int?
    /// The frame's `type` when it is a message type of this version.
    public let messageType: SignalingMessageType?
    /// The frame's request `id` when it could be read: the `re` of the error reply.
    public let requestID: String?
    /// What is wrong, without the location.
    public let reason: String
    /// For `unsupported_version`: the versions this codec speaks.
    public let supportedVersions: [Int]

    init(
        code: SignalingErrorCode, field: String? = nil, offset: Int? = nil,
        messageType: SignalingMessageType? = nil, requestID: String? = nil,
        reason: String, supportedVersions: [Int] = []
    ) {
        self.code = code
        self.field = field
        self.offset = offset
        self.messageType = messageType
        self.requestID = requestID
        self.reason = reason
        self.supportedVersions = supportedVersions
    }

    public var description: String {
        if let offset {
            return "malformed JSON at offset \(offset): \(reason)"
        }
        // An unknown type is the whole message, not a bad value: no "field" prefix.
        if let field, code != .unknownType {
            let scope = messageType.map { " of \($0.rawValue)" } ?? ""
            return "field \(quoted(field))\(scope): \(reason)"
        }
        return reason
    }
}
