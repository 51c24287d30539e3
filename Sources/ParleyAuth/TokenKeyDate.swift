/// A UTC calendar date as it appears in a token's key id `hkdfv1-YYYYMMDD`: the day whose
/// derived key signed the token.
public struct TokenKeyDate: Sendable, Hashable, Comparable, CustomStringConvertible, Encodable {
    /// The first and last instants representable as token times: 1970-01-01T00:00:00Z and
    /// 9999-12-31T23:59:59Z, in Unix seconds. Token times outside are refused, which also
    /// keeps every sum of times and leeways far from overflow.
    public static let unixTimeRange: ClosedRange<Int64> = 0...253_402_300_799

    public let year: Int
    public let month: Int
    public let day: Int

    /// A date in years 1970-9999, or nil for one that does not exist (e.g. February 30).
    public init?(year: Int, month: Int, day: Int) {
        guard (1970...9999).contains(year), (1...12).contains(month), day >= 1,
              day <= Self.daysInMonth(year: year, month: month) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The UTC date of `unixTime` (seconds), which must lie in ``unixTimeRange``.
    public init?(unixTime: Int64) {
        guard Self.unixTimeRange.contains(unixTime) else { return nil }
        // Proleptic Gregorian calendar from a day count, shifting the year to start in
        // March so the leap day is the last day of the shifted year.
        let days = unixTime / 86_400 + 719_468
        let era = days / 146_097
        let dayOfEra = days - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        self.year = Int(year)
        self.month = Int(month)
        self.day = Int(day)
    }

    /// Parses exactly eight digits `YYYYMMDD` naming a real date.
    public init?(digits: some StringProtocol) {
        let bytes = Array(digits.utf8)
        guard bytes.count == 8, bytes.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        func number(_ range: Range<Int>) -> Int { range.reduce(0) { $0 * 10 + Int(bytes[$1] - UInt8(ascii: "0")) } }
        self.init(year: number(0..<4), month: number(4..<6), day: number(6..<8))
    }

    /// Days since 1970-01-01.
    public var daysSinceEpoch: Int64 {
        let shiftedYear = Int64(month <= 2 ? year - 1 : year)
        let era = shiftedYear / 400
        let yearOfEra = shiftedYear - era * 400
        let shiftedMonth = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// `YYYYMMDD`, the form in a key id and the message the signing key is derived from.
    public var description: String {
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return pad(year, 4) + pad(month, 2) + pad(day, 2)
    }

    public static func < (lhs: TokenKeyDate, rhs: TokenKeyDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    /// Encodes as the `YYYYMMDD` string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    private static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
