/// Streaming UTF-8 validation that carries its state across chunks, so a sequence split
/// between two fragments of a text message is checked as one (RFC 6455 §8.1, §5.6;
/// well-formed UTF-8 per RFC 3629 §4 / Unicode Table 3-7).
///
/// It rejects the first byte that cannot continue a well-formed sequence: overlong forms
/// (C0, C1, E0 80-9F, F0 80-8F), UTF-16 surrogates (ED A0-BF) and anything above
/// U+10FFFF (F4 90-BF, F5-FF). Validation fails fast: an invalid prefix is reported
/// without waiting for the rest of the message.
public struct UTF8Validator: Sendable, Hashable {
    /// Continuation bytes still owed by the sequence in progress.
    private var pending: UInt8 = 0
    /// Allowed range of the next continuation byte; only the second byte of a sequence
    /// is ever narrower than 80-BF.
    private var low: UInt8 = 0x80
    private var high: UInt8 = 0xbf

    /// True when no multi-byte sequence is half-read: the input so far is complete UTF-8.
    public var isAtBoundary: Bool { pending == 0 }

    /// Feeds `bytes`; returns the index (within `bytes`) of the first invalid byte, or
    /// nil if everything so far is a valid prefix.
    public mutating func validate(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let raw = UnsafeRawPointer(base)
        var index = 0
        let count = bytes.count
        while index < count {
            if pending == 0 {
                // ASCII runs are the common case: skip them eight at a time.
                while index + 8 <= count {
                    let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                    if word & 0x8080_8080_8080_8080 != 0 { break }
                    index += 8
                }
                guard index < count else { return nil }
                let byte = bytes[index]
                switch byte {
                case 0x00...0x7f: break
                case 0xc2...0xdf: pending = 1; low = 0x80; high = 0xbf
                case 0xe0: pending = 2; low = 0xa0; high = 0xbf
                case 0xe1...0xec, 0xee...0xef: pending = 2; low = 0x80; high = 0xbf
                case 0xed: pending = 2; low = 0x80; high = 0x9f
                case 0xf0: pending = 3; low = 0x90; high = 0xbf
                case 0xf1...0xf3: pending = 3; low = 0x80; high = 0xbf
                case 0xf4: pending = 3; low = 0x80; high = 0x8f
                default: return index
                }
            } else {
                let byte = bytes[index]
                guard byte >= low, byte <= high else { return index }
                pending -= 1
                low = 0x80
                high = 0xbf
            }
            index += 1
        }
        return nil
    }

    /// Feeds an array slice; see `validate(_:)` for the result.
    public mutating func validate(_ bytes: ArraySlice<UInt8>) -> Int? {
        bytes.withUnsafeBufferPointer { validate($0) }
    }

    /// Feeds an array; see `validate(_:)` for the result.
    public mutating func validate(_ bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBufferPointer { validate($0) }
    }

    public init() {}

    /// True if `bytes` are complete, well-formed UTF-8 (RFC 3629 §4). Written here rather
    /// than using `String(validating:as:)`, which needs macOS 15 / iOS 18.
    public static func isValid(_ bytes: some Collection<UInt8>) -> Bool {
        var validator = UTF8Validator()
        let failed: Int?? = bytes.withContiguousStorageIfAvailable { validator.validate($0) }
        let failure = failed ?? validator.validate(Array(bytes))
        return failure == nil && validator.isAtBoundary
    }

    /// The text of `bytes` if they are complete, well-formed UTF-8, else nil.
    public static func string(_ bytes: some Collection<UInt8>) -> String? {
        isValid(bytes) ? String(decoding: bytes, as: UTF8.self) : nil
    }
}
