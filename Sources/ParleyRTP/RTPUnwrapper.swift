/// Turns a wrapping RTP counter (16-bit sequence number, 32-bit timestamp) into a
/// monotonic 64-bit value, taking each new value as the nearer of its forward and
/// backward distance from the previous one. Reordering across the wrap works: after
/// 65535, a 0 unwraps to 65536 and a late 65534 to 65534.
///
/// Unlike `RTPSourceState` it has no notion of validity; it suits jitter buffers and
/// NACK bookkeeping that index packets by extended number.
public struct RTPUnwrapper<Value: FixedWidthInteger & UnsignedInteger & Sendable>: Sendable, Hashable {
    private var last: Value?
    private var lastUnwrapped: Int64 = 0

    public init() {}

    /// The unwrapped value last returned, if any.
    public var current: Int64? { last == nil ? nil : lastUnwrapped }

    /// The extended value of `value`. The first value maps to itself.
    public mutating func unwrap(_ value: Value) -> Int64 {
        guard let last else {
            self.last = value
            lastUnwrapped = Int64(value)
            return lastUnwrapped
        }
        let forward = value &- last
        let half = Value.max / 2
        let step: Int64
        if forward <= half {
            step = Int64(forward)
        } else {
            // Backwards by (max - forward + 1), computed without overflowing Value.
            step = -(Int64(Value.max - forward) + 1)
        }
        lastUnwrapped &+= step
        self.last = value
        return lastUnwrapped
    }

    /// The extended value `value` would unwrap to, without recording it.
    public func peek(_ value: Value) -> Int64 {
        var copy = self
        return copy.unwrap(value)
    }
}

/// Unwraps 16-bit RTP sequence numbers.
public typealias SequenceNumberUnwrapper = RTPUnwrapper<UInt16>
/// Unwraps 32-bit RTP timestamps.
public typealias TimestampUnwrapper = RTPUnwrapper<UInt32>
