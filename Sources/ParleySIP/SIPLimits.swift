/// Bounds that stop hostile input before it costs much memory or time. A message past
/// one is not read: it is dropped (over a stream, the connection is closed), except a
/// message whose head was read and whose body is too long, which is answered 513.
///
/// The defaults fit any real SIP message with room to spare (an INVITE with an SDP offer
/// is 1-3 KiB and 20-40 header fields; RFC 4475's longest torture message has 46).
public struct SIPLimits: Sendable, Hashable {
    /// Largest message, head and body, in bytes.
    public var maxMessageBytes: Int
    /// Most header fields (lines, folded lines counting once).
    public var maxHeaderFields: Int
    /// Longest line of the head, in bytes, without its CRLF.
    public var maxLineBytes: Int
    /// Longest header value after unfolding, in bytes.
    public var maxHeaderValueBytes: Int
    /// Most parts in one multipart body.
    public var maxBodyParts: Int
    /// Most multipart bodies nested in one another that are searched.
    public var maxMultipartDepth: Int

    /// Limits; each defaults to the value of `default`.
    public init(maxMessageBytes: Int = 64 * 1024, maxHeaderFields: Int = 256, maxLineBytes: Int = 8 * 1024,
                maxHeaderValueBytes: Int = 16 * 1024, maxBodyParts: Int = 32, maxMultipartDepth: Int = 4) {
        self.maxMessageBytes = maxMessageBytes
        self.maxHeaderFields = maxHeaderFields
        self.maxLineBytes = maxLineBytes
        self.maxHeaderValueBytes = maxHeaderValueBytes
        self.maxBodyParts = maxBodyParts
        self.maxMultipartDepth = maxMultipartDepth
    }

    /// 64 KiB, 256 header fields, 8 KiB lines, 16 KiB values, 32 body parts nested 4 deep.
    public static let `default` = SIPLimits()
}
