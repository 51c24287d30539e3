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
        let keyBytes = bytes
        var rotated: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
        rotated.0 = keyBytes[phase & 3]
        rotated.1 = keyBytes[(phase + 1) & 3]
        rotated.2 = keyBytes[(phase + 2) & 3]
        rotated.3 = keyBytes[(phase + 3) & 3]
        var pattern: UInt64 = 0
        withUnsafeMutableBytes(of: &pattern) { word in
            for index in 0..<8 {
                switch index & 3 {
                case 0: word[index] = rotated.0
                case 1: word[index] = rotated.1
                case 2: word[index] = rotated.2
                default: word[index] = rotated.3
                }
            }
        }
        let count = buffer.count
        var index = 0
        // Eight bytes is a multiple of four, so the pattern stays in phase.
        while index + 8 <= count {
            let word = buffer.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            buffer.storeBytes(of: word ^ pattern, toByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < count {
            switch index & 3 {
            case 0: buffer[index] ^= rotated.0
            case 1: buffer[index] ^= rotated.1
            case 2: buffer[index] ^= rotated.2
            default: buffer[index] ^= rotated.3
            }
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
