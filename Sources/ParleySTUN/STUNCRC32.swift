/// CRC-32 as FINGERPRINT uses it (RFC 8489 §14.7, which points to ITU-T V.42 / ISO 3309):
/// reflected polynomial 0xEDB88320, initial value and final XOR 0xFFFFFFFF. The same CRC as
/// zlib, Ethernet and PNG; check value `crc32("123456789") == 0xCBF43926`.
public enum STUNCRC32 {
    /// One 256-entry table per byte position, for slicing-by-4: four input bytes per step.
    private static let tables: [[UInt32]] = {
        var first = [UInt32](repeating: 0, count: 256)
        for index in 0..<256 {
            var crc = UInt32(index)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            first[index] = crc
        }
        var tables = [first]
        for level in 1..<4 {
            let previous = tables[level - 1]
            tables.append((0..<256).map { index in (previous[index] >> 8) ^ first[Int(previous[index] & 0xFF)] })
        }
        return tables
    }()

    /// The CRC-32 of `bytes`.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        if let result = bytes.withContiguousStorageIfAvailable({ checksum(buffer: UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return Array(bytes).withUnsafeBytes { checksum(buffer: $0) }
    }

    private static func checksum(buffer: UnsafeRawBufferPointer) -> UInt32 {
        let t0 = tables[0], t1 = tables[1], t2 = tables[2], t3 = tables[3]
        var crc: UInt32 = 0xFFFF_FFFF
        var index = 0
        let count = buffer.count
        while count - index >= 4 {
            let word = crc ^ (UInt32(buffer[index]) | UInt32(buffer[index + 1]) << 8
                | UInt32(buffer[index + 2]) << 16 | UInt32(buffer[index + 3]) << 24)
            crc = t3[Int(word & 0xFF)] ^ t2[Int(word >> 8 & 0xFF)] ^ t1[Int(word >> 16 & 0xFF)] ^ t0[Int(word >> 24)]
            index += 4
        }
        while index < count {
            crc = (crc >> 8) ^ t0[Int((crc ^ UInt32(buffer[index])) & 0xFF)]
            index += 1
        }
        return crc ^ 0xFFFF_FFFF
    }
}
