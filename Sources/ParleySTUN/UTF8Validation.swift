/// RFC 3629 §4 well-formed UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
///
/// Written here rather than using `String(validating:as:)`, which needs macOS 15 / iOS 18,
/// so the module still builds for older Apple systems.
func isValidUTF8(_ bytes: ArraySlice<UInt8>) -> Bool {
    var index = bytes.startIndex
    let end = bytes.endIndex
    while index < end {
        let lead = bytes[index]
        if lead < 0x80 { index += 1; continue }
        let count: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: count = 1
        case 0xE0: count = 2; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: count = 2
        case 0xED: count = 2; upper = 0x9F
        case 0xF0: count = 3; lower = 0x90
        case 0xF1...0xF3: count = 3
        case 0xF4: count = 3; upper = 0x8F
        default: return false
        }
        guard end - index > count else { return false }
        let second = bytes[index + 1]
        guard second >= lower, second <= upper else { return false }
        var continuation = index + 2
        while continuation <= index + count {
            guard bytes[continuation] & 0xC0 == 0x80 else { return false }
            continuation += 1
        }
        index += count + 1
    }
    return true
}

/// The text of `bytes` if they are well-formed UTF-8, else nil.
func validatedUTF8String(_ bytes: ArraySlice<UInt8>) -> String? {
    guard isValidUTF8(bytes) else { return nil }
    return String(decoding: bytes, as: UTF8.self)
}
