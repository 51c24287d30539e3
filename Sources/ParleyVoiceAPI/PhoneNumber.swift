/// A phone number in E.164 form (ITU-T E.164: a country code and subscriber number of at
/// most 15 digits, the first not 0), as Parley sends it: `+` then the digits.
///
/// Backends write numbers with and without the `+` (`+46700000000`, `46700000000`) and
/// people add spaces, hyphens, dots and parentheses; ``init(normalizing:)`` accepts all of
/// these and keeps only the digits. It never guesses a country: a national number
/// (`0700000000`) and an international prefix (`0046...`) are refused, because a leading 0
/// cannot start an E.164 number and rewriting it would need the caller's country.
public struct PhoneNumber: Sendable, Hashable, CustomStringConvertible {
    /// The digits without `+` (`46700000000`).
    public let digits: String

    /// The number as E.164 text with its `+` (`+46700000000`): what Parley sends.
    public var e164: String { "+" + digits }

    public var description: String { e164 }

    /// The most digits an E.164 number has.
    public static let maxDigits = 15

    /// Reads a number written with or without `+`, with visual separators (space, `-`,
    /// `.`, `(`, `)`) anywhere after the first digit or the `+`.
    public init(normalizing text: some StringProtocol) throws(VoiceAPIError) {
        let bytes = Array(text.utf8)
        func refuse(_ why: String) -> VoiceAPIError {
            let shown = String(decoding: bytes.prefix(40), as: UTF8.self)
            return VoiceAPIError(.invalidPhoneNumber, "\"\(shown)\" is not a phone number in E.164 form: \(why)")
        }
        guard bytes.count <= 64 else { throw refuse("longer than 64 bytes") }
        var index = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: "+") { index += 1 }
        var digits: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                digits.append(byte)
            case UInt8(ascii: " "), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "("), UInt8(ascii: ")"):
                guard !digits.isEmpty || byte == UInt8(ascii: "(") else { throw refuse("a separator before the first digit") }
            default:
                throw refuse("only digits, an optional leading '+' and the separators space - . ( ) are allowed")
            }
        }
        guard !digits.isEmpty else { throw refuse("no digits") }
        guard digits[0] != UInt8(ascii: "0") else {
            throw refuse("it starts with 0 (a national number or an international prefix; write the country code instead)")
        }
        guard digits.count >= 2 else { throw refuse("a country code and a subscriber number need at least 2 digits") }
        guard digits.count <= Self.maxDigits else { throw refuse("\(digits.count) digits, more than E.164's \(Self.maxDigits)") }
        self.digits = String(decoding: digits, as: UTF8.self)
    }
}
