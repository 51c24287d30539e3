/// Bounds-checked big-endian reads over a slice, throwing `RTPError` with offsets
/// counted from `origin` (the start of the whole datagram).
struct SliceReader {
    let bytes: ArraySlice<UInt8>
    let origin: Int
    private(set) var index: Int
    let end: Int

    init(_ bytes: ArraySlice<UInt8>, origin: Int, range: Range<Int>) {
        self.bytes = bytes
        self.origin = origin
        self.index = range.lowerBound
        self.end = range.upperBound
    }

    var remaining: Int { end - index }
    var offset: Int { index - origin }

    func need(_ count: Int, _ context: @autoclosure () -> String) throws(RTPError) {
        guard count >= 0, end - index >= count else {
            throw .truncated(context(), offset: offset, needed: count, available: end - index)
        }
    }

    mutating func uint8(_ context: @autoclosure () -> String) throws(RTPError) -> UInt8 {
        try need(1, context())
        defer { index += 1 }
        return bytes[index]
    }

    mutating func uint16(_ context: @autoclosure () -> String) throws(RTPError) -> UInt16 {
        try need(2, context())
        defer { index += 2 }
        return bytes.readUInt16(at: index)
    }

    mutating func uint32(_ context: @autoclosure () -> String) throws(RTPError) -> UInt32 {
        try need(4, context())
        defer { index += 4 }
        return bytes.readUInt32(at: index)
    }

    mutating func bytes(_ count: Int, _ context: @autoclosure () -> String) throws(RTPError) -> [UInt8] {
        try need(count, context())
        defer { index += count }
        return Array(bytes[index..<(index + count)])
    }

    mutating func rest() -> [UInt8] {
        defer { index = end }
        return Array(bytes[index..<end])
    }
}
