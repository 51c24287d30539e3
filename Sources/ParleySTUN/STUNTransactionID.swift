internal import ParleyWireCore

/// The 96-bit transaction ID of a STUN message (RFC 8489 §5, §6).
public struct STUNTransactionID: Sendable, Hashable, Encodable, CustomStringConvertible {
    // Two integers rather than an array, so a message value needs no extra allocation.
    let high: UInt32
    let low: UInt64

    /// Returns nil unless `bytes` holds exactly 12 bytes.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 12 else { return nil }
        var high: UInt32 = 0
        var low: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 4 { high = high << 8 | UInt32(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.high = high
        self.low = low
    }

    /// Reads 12 bytes at `offset`; the caller has checked they exist.
    init(reading bytes: [UInt8], at offset: Int) {
        var high: UInt32 = 0
        var low: UInt64 = 0
        for index in 0..<4 { high = high << 8 | UInt32(bytes[offset + index]) }
        for index in 4..<12 { low = low << 8 | UInt64(bytes[offset + index]) }
        self.high = high
        self.low = low
    }

    /// A fresh transaction ID from the caller's generator. RFC 8489 §6 asks for a
    /// cryptographically random one so that responses cannot be forged by guessing: outside
    /// tests pass `SystemRandomNumberGenerator`, which is; a seeded generator makes a test's
    /// messages repeat.
    public static func random(using generator: inout some RandomNumberGenerator) -> STUNTransactionID {
        // The first 96 bits of two draws, in order.
        let first = generator.next()
        let second = generator.next()
        return STUNTransactionID(high: UInt32(truncatingIfNeeded: first >> 32), low: first << 32 | second >> 32)
    }

    private init(high: UInt32, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The 12 bytes in wire order.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(12)
        append(to: &out)
        return out
    }

    func append(to out: inout [UInt8]) {
        out.appendUInt32(high)
        out.appendUInt64(low)
    }

    /// Lower-case hex, 24 digits.
    public var description: String { hex32(high) + hex32(UInt32(truncatingIfNeeded: low >> 32)) + hex32(UInt32(truncatingIfNeeded: low)) }

    /// Encodes as 24 lower-case hex digits.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
