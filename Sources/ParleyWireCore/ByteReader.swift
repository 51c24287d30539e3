/// A bounds-checked cursor over a byte buffer, big-endian (network order) reads.
///
/// Every read either succeeds or throws `ByteReader.OutOfBounds` carrying the offset
/// and how many bytes were wanted, so parsers built on it can never read past the end
/// and can report where input was cut short.
public struct ByteReader: Sendable {
    /// Thrown when a read needs more bytes than remain.
    public struct OutOfBounds: Error, Sendable, Hashable {
        /// Offset (from the start of the buffer) at which the read began.
        public let offset: Int
        /// Bytes the read needed.
        public let needed: Int
        /// Bytes that were left.
        public let available: Int

        public init(offset: Int, needed: Int, available: Int) {
            self.offset = offset
            self.needed = needed
            self.available = available
        }
    }

    public let bytes: [UInt8]
    /// Current position, from the start of `bytes`.
    public private(set) var offset: Int
    /// Exclusive end of the readable region.
    public let end: Int

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
        self.end = bytes.count
    }

    public init<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
        self.init(Array(bytes))
    }

    /// A reader limited to `range` of `bytes`.
    public init(_ bytes: [UInt8], range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count)
        self.bytes = bytes
        self.offset = range.lowerBound
        self.end = range.upperBound
    }

    public var remaining: Int { end - offset }
    public var isAtEnd: Bool { offset >= end }

    private func check(_ count: Int) throws(OutOfBounds) {
        guard count >= 0, count <= end - offset else {
            throw OutOfBounds(offset: offset, needed: count, available: end - offset)
        }
    }

    public mutating func readUInt8() throws(OutOfBounds) -> UInt8 {
        try check(1)
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func readUInt16() throws(OutOfBounds) -> UInt16 {
        try check(2)
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    public mutating func readUInt24() throws(OutOfBounds) -> UInt32 {
        try check(3)
        defer { offset += 3 }
        return UInt32(bytes[offset]) << 16 | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2])
    }

    public mutating func readUInt32() throws(OutOfBounds) -> UInt32 {
        try check(4)
        defer { offset += 4 }
        var value: UInt32 = 0
        for i in 0..<4 { value = value << 8 | UInt32(bytes[offset + i]) }
        return value
    }

    public mutating func readUInt64() throws(OutOfBounds) -> UInt64 {
        try check(8)
        defer { offset += 8 }
        var value: UInt64 = 0
        for i in 0..<8 { value = value << 8 | UInt64(bytes[offset + i]) }
        return value
    }

    public mutating func readBytes(_ count: Int) throws(OutOfBounds) -> [UInt8] {
        try check(count)
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    public mutating func skip(_ count: Int) throws(OutOfBounds) {
        try check(count)
        offset += count
    }

    /// Returns the next byte without consuming it.
    public func peekUInt8() throws(OutOfBounds) -> UInt8 {
        try check(1)
        return bytes[offset]
    }
}

/// Big-endian appends onto a byte array.
extension Array where Element == UInt8 {
    public mutating func appendUInt16(_ value: UInt16) {
        append(UInt8(value >> 8)); append(UInt8(truncatingIfNeeded: value))
    }

    public mutating func appendUInt24(_ value: UInt32) {
        append(UInt8(truncatingIfNeeded: value >> 16)); append(UInt8(truncatingIfNeeded: value >> 8)); append(UInt8(truncatingIfNeeded: value))
    }

    public mutating func appendUInt32(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    public mutating func appendUInt64(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}
