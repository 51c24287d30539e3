import ParleyRTP

/// The sending side of RFC 2198 redundancy: remembers the last frames sent on a stream and
/// wraps each new one with `depth` of them.
///
/// Frames are remembered whatever the depth, so the first packet after RED turns on already
/// carries the frame before it. Only frames of the same stream (SSRC) whose timestamps lie
/// 1-16383 units earlier (RFC 2198's 14-bit offset) and that fit a 10-bit length are used.
public struct RedundantAudioEncoder: Sendable {
    /// The RED payload type on the wire.
    public let redPayloadType: UInt8
    /// The wrapped codec's payload type, written in every block header.
    public let primaryPayloadType: UInt8
    /// Earlier frames per packet (0: packets go out plain); from `RedundancyPolicy`.
    public var depth = 0

    private var stream: UInt32?
    /// Recent frames, oldest first, by timestamp.
    private var history: [(timestamp: UInt32, payload: [UInt8])] = []

    public init(redPayloadType: UInt8, primaryPayloadType: UInt8) {
        self.redPayloadType = redPayloadType
        self.primaryPayloadType = primaryPayloadType
    }

    /// Remembers `payload` (sent at `timestamp` on `stream`) and returns the RED payload to
    /// send instead of it, or nil when `depth` is 0 and the frame goes out plain.
    public mutating func wrap(_ payload: ArraySlice<UInt8>, timestamp: UInt32, stream: UInt32) -> [UInt8]? {
        if self.stream != stream {
            self.stream = stream
            history.removeAll()
        }
        var blocks: [RedundantAudioPayload.Block] = []
        if depth > 0 {
            for entry in history.reversed() where blocks.count < depth {
                let offset = timestamp &- entry.timestamp
                guard offset >= 1, offset <= UInt32(RedundantAudioPayload.maximumTimestampOffset),
                      entry.payload.count <= RedundantAudioPayload.maximumBlockLength else { continue }
                blocks.insert(.init(payloadType: primaryPayloadType, timestampOffset: UInt16(offset), data: entry.payload), at: 0)
            }
        }
        remember(Array(payload), timestamp: timestamp)
        guard depth > 0 else { return nil }
        return try? RedundantAudioPayload(redundant: blocks, primaryPayloadType: primaryPayloadType, primary: Array(payload)).serialized()
    }

    /// Remembers a frame sent plain by a path that does not wrap (the relay's in-place one).
    public mutating func remember(_ payload: ArraySlice<UInt8>, timestamp: UInt32, stream: UInt32) {
        if self.stream != stream {
            self.stream = stream
            history.removeAll()
        }
        remember(Array(payload), timestamp: timestamp)
    }

    private mutating func remember(_ payload: [UInt8], timestamp: UInt32) {
        // Kept in timestamp order: a relay may forward a recovered older frame after a newer one.
        let index = history.lastIndex { Int32(bitPattern: $0.timestamp &- timestamp) < 0 }.map { $0 + 1 } ?? 0
        if index < history.count, history[index].timestamp == timestamp { return }
        history.insert((timestamp, payload), at: index)
        if history.count > RedundancyPolicy.maximumDepth + 1 { history.removeFirst(history.count - RedundancyPolicy.maximumDepth - 1) }
    }
}
