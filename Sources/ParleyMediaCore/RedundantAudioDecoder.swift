public import ParleyRTP

/// The receiving side of RFC 2198 redundancy: unwraps RED packets into the primary packet
/// and the earlier packets it carries that have not arrived, so each frame goes on once.
///
/// A redundant block becomes the packet `primary sequence - k`, where k is its timestamp
/// offset over the frame duration; blocks of another payload type, or whose offset is not
/// a whole number of frames, are skipped. It remembers which of the last 64 sequence numbers
/// it has seen (every packet of the stream, plain or RED, must be `note`d or unwrapped).
public struct RedundantAudioDecoder: Sendable {
    /// The wrapped codec's payload type; the primary and recovered packets get it.
    public let primaryPayloadType: UInt8
    /// Timestamp units per frame (960 for 20 ms Opus).
    public let frameDuration: UInt32

    private var ssrc: UInt32?
    private var highest: UInt16 = 0
    /// Bit i set: `highest - i` has been seen.
    private var seen: UInt64 = 0

    public init(primaryPayloadType: UInt8, frameDuration: UInt32) {
        self.primaryPayloadType = primaryPayloadType
        self.frameDuration = max(frameDuration, 1)
    }

    /// What one RED packet yields.
    public struct Unwrapped: Sendable, Hashable {
        /// Rebuilt packets that had not arrived, oldest first.
        public var recovered: [RTPPacket]
        /// The packet's own frame.
        public var primary: RTPPacket
        /// How many frames back the oldest usable block reaches (0: none), whether or not
        /// it was needed: the sender's redundancy depth.
        public var depth: Int
    }

    /// Unwraps a packet whose payload is RED. Throws for a malformed RED payload.
    public mutating func unwrap(_ packet: RTPPacket) throws(RTPError) -> Unwrapped {
        let red = try RedundantAudioPayload(parsing: packet.payload)
        var recovered: [RTPPacket] = []
        var depth = 0
        for block in red.redundant where block.payloadType == primaryPayloadType && block.timestampOffset > 0 {
            let offset = UInt32(block.timestampOffset)
            guard offset % frameDuration == 0 else { continue }
            let k = offset / frameDuration
            guard k <= 32 else { continue }
            depth = max(depth, Int(k))
            let sequence = packet.sequenceNumber &- UInt16(k)
            guard !hasSeen(sequence, ssrc: packet.ssrc) else { continue }
            recovered.append(RTPPacket(
                payloadType: primaryPayloadType, sequenceNumber: sequence, timestamp: packet.timestamp &- offset,
                ssrc: packet.ssrc, payload: block.data[...]))
        }
        for rebuilt in recovered { note(rebuilt.sequenceNumber, ssrc: packet.ssrc) }
        note(packet.sequenceNumber, ssrc: packet.ssrc)
        var primary = packet
        primary.payloadType = primaryPayloadType
        primary.payload = red.primary[...]
        return Unwrapped(recovered: recovered, primary: primary, depth: depth)
    }

    /// Records a packet of the stream that arrived plain.
    public mutating func note(_ sequence: UInt16, ssrc: UInt32) {
        if self.ssrc != ssrc {
            self.ssrc = ssrc
            highest = sequence
            seen = 1
            return
        }
        let ahead = Int16(bitPattern: sequence &- highest)
        if ahead > 0 {
            seen = ahead >= 64 ? 1 : seen << UInt64(ahead) | 1
            highest = sequence
        } else if -Int(ahead) < 64 {
            seen |= 1 << UInt64(-Int(ahead))
        }
    }

    private func hasSeen(_ sequence: UInt16, ssrc: UInt32) -> Bool {
        guard self.ssrc == ssrc else { return false }
        let behind = Int(Int16(bitPattern: highest &- sequence))
        // Newer than anything seen: not seen. Older than the window: treat as seen (too late).
        if behind < 0 { return false }
        if behind >= 64 { return true }
        return seen & (1 << UInt64(behind)) != 0
    }
}
