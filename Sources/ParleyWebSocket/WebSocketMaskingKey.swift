/// The 32-bit masking key a client puts on every frame it sends (RFC 6455 §5.3).
///
/// The key must be unpredictable, so this module never makes one: the caller supplies
/// four random bytes (for example from `SecureRandom.bytes(4)`), which keeps frame
/// serialization a pure function.
public struct WebSocketMaskingKey: Sendable, Hashable, CustomStringConvertible {
    /// The four key bytes in wire order, first byte in the most significant position.
    public let rawValue: UInt32

    /// A key from its four bytes in wire order.
    public init(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) {
        rawValue = UInt32(b0) << 24 | UInt32(b1) << 16 | UInt32(b2) << 8 | UInt32(b3)
    }

    /// A key from exactly four bytes; nil for any other count.
    public init?(_ bytes: some Collection<UInt8>) {
        guard bytes.count == 4 else { return nil }
        var value: UInt32 = 0
        for byte in bytes { value = value << 8 | UInt32(byte) }
        rawValue = value
    }

    /// A key from its 32-bit value (wire order, big-endian).
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The four bytes in wire order.
    public var bytes: [UInt8] {
        [UInt8(truncatingIfNeeded: rawValue >> 24), UInt8(truncatingIfNeeded: rawValue >> 16),
         UInt8(truncatingIfNeeded: rawValue >> 8), UInt8(truncatingIfNeeded: rawValue)]
    }

    /// Lowercase hex of the four bytes, e.g. `37fa213d`.
    public var description: String {
        let digits = String(rawValue, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// XORs `buffer` with the key, `phase` being the index within the payload of the
    /// buffer's first byte (§5.3: octet i is XORed with key octet i mod 4). Works a word
    /// at a time; masking and unmasking are the same operation.
    func apply(to buffer: UnsafeMutableRawBufferPointer, phase: Int) {
        // Rotate the key so its first byte lines up with the buffer's first byte.
        let shift = UInt32((phase & 3) * 8)
        let rotated = shift == 0 ? rawValue : rawValue << shift | rawValue >> (32 - shift)
        // The same four bytes twice, laid out in memory order whatever the host's endianness.
        let word32 = UInt32(bigEndian: rotated)
        let pattern = UInt64(word32) | UInt64(word32) << 32
        let count = buffer.count
        var index = 0
        // Eight bytes is a multiple of four, so the pattern stays in phase.
        while index + 8 <= count {
            let word = buffer.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            buffer.storeBytes(of: word ^ pattern, toByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < count {
            buffer[index] ^= UInt8(truncatingIfNeeded: rotated >> UInt32(24 - (index & 3) * 8))
            index += 1
        }
    }

    /// Masks (or unmasks) `bytes[range]` in place.
    func apply(to bytes: inout [UInt8], range: Range<Int>, phase: Int) {
        guard !range.isEmpty else { return }
        bytes.withUnsafeMutableBytes { raw in
            apply(to: UnsafeMutableRawBufferPointer(rebasing: raw[range]), phase: phase)
        }
    }
}
