/// The DTMF strings SVAML carries, checked where they are read.
enum DTMF {
    /// Keys a caller can press: `0`-`9`, `*`, `#`.
    static func isKey(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: "*") || byte == UInt8(ascii: "#")
    }

    /// Tones Parley can send: the keys, `A`-`D`, and `w`, a pause of half a second.
    static func isTone(_ byte: UInt8) -> Bool {
        isKey(byte) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "D")) || byte == UInt8(ascii: "w") || byte == UInt8(ascii: "W")
    }

    /// Reads `key` of `reader` as a string of tones to send.
    static func tones(_ key: String, of reader: FieldReader, required: Bool) throws(VoiceAPIError) -> String? {
        let text = required
            ? try reader.string(key, maxBytes: VoiceAPILimits.maxDTMFCharacters)
            : try reader.optionalString(key, maxBytes: VoiceAPILimits.maxDTMFCharacters, allowEmpty: false)
        guard let text else { return nil }
        guard text.utf8.allSatisfy(isTone) else {
            throw reader.failure(key, "\(FieldReader.quoted(text)) holds characters other than 0-9 * # A-D w")
        }
        return text
    }
}
