/// The size limits of protocol version 1, as docs/protocol.md states them.
public enum SignalingLimits {
    /// Default largest frame `SignalingCodec.decode` accepts, in bytes (the server's default too).
    public static let defaultMaxFrameSize = 65_536
    /// Deepest nesting of arrays and objects in a frame, unknown fields included.
    public static let maxDepth = 32
    /// Custom headers of a call: names plus values, UTF-8 bytes, in total.
    public static let maxHeadersBytes = 1024
    /// Number of custom headers on a call.
    public static let maxHeaderCount = 64
    /// An SDP offer or answer.
    public static let maxSDPBytes = 32_768
    /// User ids (and SIP URIs, bundle ids).
    public static let maxUserIDBytes = 255
    /// Request ids, session ids, conference ids, application keys, capabilities, error codes.
    public static let maxIdentifierBytes = 64
    /// Device ids.
    public static let maxDeviceIDBytes = 128
    /// A user token (JWT).
    public static let maxTokenBytes = 8192
    /// A push token.
    public static let maxPushTokenBytes = 1024
    /// A relayed push payload.
    public static let maxPushPayloadBytes = 4096
    /// Free text: error messages, platform descriptions.
    public static let maxTextBytes = 1024
    /// A caller's display name (`call.start`, `call.incoming`, push claims), UTF-8 bytes.
    public static let maxDisplayNameBytes = 255
    /// Digits in one `call.dtmf`.
    public static let maxDTMFDigits = 32
    /// Talkers in one `call.talking`.
    public static let maxTalkers = 100
    /// Entries in small lists: capabilities, codecs, ICE servers and their URLs, supported versions.
    public static let maxListCount = 16
    /// Times: integer milliseconds since the Unix epoch, at most 2^53 - 1 so that every
    /// JavaScript client reads them exactly.
    public static let maxTime: Int64 = 9_007_199_254_740_991
}
