/// A point in time as the Sinch Voice API writes it: ISO 8601 in UTC, to the second
/// (`2014-09-24T10:59:41Z`), or with milliseconds when they are not zero
/// (`2014-09-24T10:59:41.250Z`).
///
/// Reading is more forgiving than writing, because backends and their libraries write the
/// `x-timestamp` header in more than one way: a fraction of any length (cut to
/// milliseconds) and a zone of `Z`, `±HH:MM` or `±HHMM` are accepted (Ruby's
/// `Time#iso8601` writes an offset, JavaScript's `toISOString` milliseconds). A date and
/// time without a zone is refused: it names no instant.
public struct SinchTimestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since the Unix epoch (1970-01-01T00:00:00Z).
    public let unixMilliseconds: Int64

    /// The years that can be written with four digits.
    static let years: ClosedRange<Int64> = 1...9999

    /// The instant `unixMilliseconds` after the epoch, refused outside the years 0001-9999.
    public init(unixMilliseconds: Int64) throws(VoiceAPIError) {
        let lower = Self.daysFromCivil(year: 1, month: 1, day: 1) * 86_400_000
        let upper = (Self.daysFromCivil(year: 9999, month: 12, day: 31) + 1) * 86_400_000 - 1
        guard unixMilliseconds >= lower, unixMilliseconds <= upper else {
            throw VoiceAPIError(.invalidTimestamp, "\(unixMilliseconds) ms is outside the years 0001-9999")
        }
        self.unixMilliseconds = unixMilliseconds
    }

    /// The instant `unixSeconds` after the epoch.
    public init(unixSeconds: Int64) throws(VoiceAPIError) {
        let (milliseconds, overflow) = unixSeconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { throw VoiceAPIError(.invalidTimestamp, "\(unixSeconds) s is outside the years 0001-9999") }
        try self.init(unixMilliseconds: milliseconds)
    }

    /// Whole seconds since the epoch, rounded toward the past.
    public var unixSeconds: Int64 {
        unixMilliseconds >= 0 ? unixMilliseconds / 1000 : (unixMilliseconds - 999) / 1000
    }

    public static func < (a: SinchTimestamp, b: SinchTimestamp) -> Bool { a.unixMilliseconds < b.unixMilliseconds }

    // MARK: Writing

    /// The ISO 8601 text, in UTC with `Z`.
    public var text: String {
        let milliseconds = ((unixMilliseconds % 86_400_000) + 86_400_000) % 86_400_000
        let days = (unixMilliseconds - milliseconds) / 86_400_000
        let (year, month, day) = Self.civilFromDays(days)
        let secondOfDay = milliseconds / 1000
        var out = Self.padded(year, 4) + "-" + Self.padded(month, 2) + "-" + Self.padded(day, 2)
        out += "T" + Self.padded(secondOfDay / 3600, 2) + ":" + Self.padded(secondOfDay / 60 % 60, 2)
        out += ":" + Self.padded(secondOfDay % 60, 2)
        if milliseconds % 1000 != 0 { out += "." + Self.padded(milliseconds % 1000, 3) }
        return out + "Z"
    }

    public var description: String { text }

    private static func padded(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    // MARK: Reading

    /// Reads ISO 8601 text with a zone (see the type's comment for the forms accepted).
    public init(parsing text: some StringProtocol) throws(VoiceAPIError) {
        let bytes = Array(text.utf8)
        func refuse(_ why: String) -> VoiceAPIError {
            let shown = String(decoding: bytes.prefix(40), as: UTF8.self)
            return VoiceAPIError(.invalidTimestamp, "\"\(shown)\" is not an ISO 8601 date and time with a zone: \(why)")
        }
        guard bytes.count <= 64 else { throw refuse("longer than 64 bytes") }
        var index = 0
        func number(_ width: Int, _ what: String) throws(VoiceAPIError) -> Int64 {
            guard index + width <= bytes.count else { throw refuse("the \(what) is cut short") }
            var value: Int64 = 0
            for byte in bytes[index..<index + width] {
                guard byte >= 0x30, byte <= 0x39 else { throw refuse("the \(what) is not \(width) digits") }
                value = value * 10 + Int64(byte - 0x30)
            }
            index += width
            return value
        }
        func expect(_ character: UInt8, _ what: String) throws(VoiceAPIError) {
            guard index < bytes.count, bytes[index] == character else { throw refuse("expected \(what)") }
            index += 1
        }
        let year = try number(4, "year")
        try expect(UInt8(ascii: "-"), "'-' after the year")
        let month = try number(2, "month")
        try expect(UInt8(ascii: "-"), "'-' after the month")
        let day = try number(2, "day")
        guard index < bytes.count, bytes[index] == UInt8(ascii: "T") || bytes[index] == UInt8(ascii: "t") else {
            throw refuse("expected 'T' between the date and the time")
        }
        index += 1
        let hour = try number(2, "hour")
        try expect(UInt8(ascii: ":"), "':' after the hour")
        let minute = try number(2, "minute")
        try expect(UInt8(ascii: ":"), "':' after the minutes")
        let second = try number(2, "second")
        var milliseconds: Int64 = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: ",") {
            index += 1
            var digits = 0
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                if digits < 3 { milliseconds = milliseconds * 10 + Int64(bytes[index] - 0x30) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { throw refuse("no digits after the decimal point") }
            for _ in digits..<max(digits, 3) { milliseconds *= 10 }
        }
        guard index < bytes.count else { throw refuse("no zone (Z or an offset)") }
        var offsetMinutes: Int64 = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let negative = bytes[index] == UInt8(ascii: "-")
            index += 1
            let offsetHours = try number(2, "zone's hours")
            if index < bytes.count, bytes[index] == UInt8(ascii: ":") { index += 1 }
            let offsetMinutesPart = try number(2, "zone's minutes")
            guard offsetHours <= 23, offsetMinutesPart <= 59 else { throw refuse("the zone offset is out of range") }
            offsetMinutes = (offsetHours * 60 + offsetMinutesPart) * (negative ? -1 : 1)
        default:
            throw refuse("expected Z or an offset after the time")
        }
        guard index == bytes.count else { throw refuse("unexpected text after the zone") }
        guard Self.years.contains(year), (1...12).contains(month) else { throw refuse("the date is out of range") }
        guard day >= 1, day <= Self.daysInMonth(year: year, month: month) else { throw refuse("the month has no such day") }
        // A leap second (:60) is not representable in Unix time; no signer sends one.
        guard hour <= 23, minute <= 59, second <= 59 else { throw refuse("the time is out of range") }
        let days = Self.daysFromCivil(year: year, month: month, day: day)
        let local = ((days * 24 + hour) * 60 + minute) * 60 + second
        try self.init(unixMilliseconds: (local - offsetMinutes * 60) * 1000 + milliseconds)
    }

    // MARK: The proleptic Gregorian calendar

    static func isLeap(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the date, counting in 400-year cycles of 146 097 days from
    /// a year that starts in March, so the leap day falls at the end of each year.
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let marchYear = month <= 2 ? year - 1 : year
        let cycle = (marchYear >= 0 ? marchYear : marchYear - 399) / 400
        let yearOfCycle = marchYear - cycle * 400
        let marchMonth = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * marchMonth + 2) / 5 + day - 1
        let dayOfCycle = yearOfCycle * 365 + yearOfCycle / 4 - yearOfCycle / 100 + dayOfYear
        return cycle * 146_097 + dayOfCycle - 719_468
    }

    /// The inverse of ``daysFromCivil(year:month:day:)``.
    static func civilFromDays(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let cycle = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfCycle = shifted - cycle * 146_097
        let yearOfCycle = (dayOfCycle - dayOfCycle / 1460 + dayOfCycle / 36_524 - dayOfCycle / 146_096) / 365
        let dayOfYear = dayOfCycle - (365 * yearOfCycle + yearOfCycle / 4 - yearOfCycle / 100)
        let marchMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * marchMonth + 2) / 5 + 1
        let month = marchMonth < 10 ? marchMonth + 3 : marchMonth - 9
        return (yearOfCycle + cycle * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
