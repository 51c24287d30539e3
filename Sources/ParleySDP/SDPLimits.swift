/// Bounds that stop hostile input before it costs much memory or time.
///
/// The defaults fit any real WebRTC or SIP description with room to spare (a browser's
/// audio offer is about 1.5 KiB and 40 lines).
public struct SDPLimits: Sendable, Hashable {
    /// Largest accepted input, in bytes.
    public var maxBytes: Int
    /// Most lines accepted.
    public var maxLines: Int
    /// Most `m=` sections accepted.
    public var maxMediaSections: Int

    public init(maxBytes: Int = 64 * 1024, maxLines: Int = 8192, maxMediaSections: Int = 256) {
        self.maxBytes = maxBytes
        self.maxLines = maxLines
        self.maxMediaSections = maxMediaSections
    }

    /// 64 KiB, 8192 lines, 256 media sections.
    public static let `default` = SDPLimits()
}
