/// An HTTP date (RFC 9110 §5.6.7), as a `retry-after` field may carry one, read without
/// Foundation's locale-dependent formatters.
///
/// All three forms a recipient must accept: IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`,
/// the obsolete RFC 850 form `Sunday, 06-Nov-94 08:49:37 GMT` and asctime's
/// `Sun Nov  6 08:49:37 1994`. Names are case-sensitive, the zone is always GMT, each form
/// has fixed field widths; anything else is refused (nil), never guessed at.
enum HTTPDate {
    /// Seconds since the Unix epoch of `text`, or nil if it is not an HTTP date.
    ///
    /// - Parameter nowSeconds: the current time, for the RFC 850 form's two-digit year: a
    ///   year more than 50 years ahead of now means the most recent past year with those
    ///   digits (RFC 9110 §5.6.7).
    static func unixSeconds(_ text: String, nowSeconds: Int64) -> Int64? {
        let bytes = Array(text.utf8)
        guard let comma = bytes.firstIndex(of: UInt8(ascii: ",")) else { return asctime(bytes) }
        let dayName = Array(bytes[..<comma])
        let rest = Array(bytes[(comma + 1)...])
        if shortDayNames.contains(dayName) { return imfFixdate(rest) }
        if longDayNames.contains(dayName) { return rfc850(rest, nowSeconds: nowSeconds) }
        return nil
    }

    private static let shortDayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map { Array($0.utf8) }
    private static let longDayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"].map { Array($0.utf8) }
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].map { Array($0.utf8) }

    /// ` 06 Nov 1994 08:49:37 GMT` (after the day name and comma).
    private static func imfFixdate(_ b: [UInt8]) -> Int64? {
        guard b.count == 25, b[0] == space, b[3] == space, b[7] == space, b[12] == space, b[21] == space,
              Array(b[22...]) == gmt,
              let day = number(b, 1, 2), let month = month(b, 4), let year = number(b, 8, 4), let time = clock(b, 13)
        else { return nil }
        return seconds(year: year, month: month, day: day, time: time)
    }

    /// ` 06-Nov-94 08:49:37 GMT` (after the day name and comma).
    private static func rfc850(_ b: [UInt8], nowSeconds: Int64) -> Int64? {
        guard b.count == 23, b[0] == space, b[3] == dash, b[7] == dash, b[10] == space, b[19] == space,
              Array(b[20...]) == gmt,
              let day = number(b, 1, 2), let month = month(b, 4), let twoDigits = number(b, 8, 2), let time = clock(b, 11)
        else { return nil }
        // The century that puts the year at most 50 years ahead of now.
        let nowYear = 1970 + Int(max(0, nowSeconds) / 31_556_952)
        var year = (nowYear / 100) * 100 + twoDigits
        if year > nowYear + 50 { year -= 100 }
        return seconds(year: year, month: month, day: day, time: time)
    }

    /// `Sun Nov  6 08:49:37 1994`: the day is two digits or a space and one digit.
    private static func asctime(_ b: [UInt8]) -> Int64? {
        guard b.count == 24, shortDayNames.contains(Array(b[0..<3])), b[3] == space, b[7] == space, b[10] == space,
              b[19] == space, let month = month(b, 4), let time = clock(b, 11), let year = number(b, 20, 4)
        else { return nil }
        let day: Int
        if b[8] == space, let single = number(b, 9, 1) { day = single } else if let double = number(b, 8, 2) { day = double } else { return nil }
        return seconds(year: year, month: month, day: day, time: time)
    }

    private static let space = UInt8(ascii: " ")
    private static let dash = UInt8(ascii: "-")
    private static let gmt = Array("GMT".utf8)

    /// `count` ASCII digits at `offset`.
    private static func number(_ b: [UInt8], _ offset: Int, _ count: Int) -> Int? {
        var value = 0
        for byte in b[offset..<(offset + count)] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// A three-letter month name at `offset`, as 1...12.
    private static func month(_ b: [UInt8], _ offset: Int) -> Int? {
        monthNames.firstIndex(of: Array(b[offset..<(offset + 3)])).map { $0 + 1 }
    }

    /// `HH:MM:SS` at `offset`, as seconds into the day (a leap second, :60, is allowed).
    private static func clock(_ b: [UInt8], _ offset: Int) -> Int? {
        guard b[offset + 2] == UInt8(ascii: ":"), b[offset + 5] == UInt8(ascii: ":"),
              let hour = number(b, offset, 2), let minute = number(b, offset + 3, 2), let second = number(b, offset + 6, 2),
              hour < 24, minute < 60, second <= 60
        else { return nil }
        return hour * 3600 + minute * 60 + second
    }

    private static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    /// Leap years in 1...(year - 1).
    private static func leapYears(before year: Int) -> Int { (year - 1) / 4 - (year - 1) / 100 + (year - 1) / 400 }

    /// Days before the first of each month in a common year.
    private static let daysBeforeMonth = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334]

    private static func seconds(year: Int, month: Int, day: Int, time: Int) -> Int64? {
        guard year >= 1 else { return nil }
        let monthLengths = [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard day >= 1, day <= monthLengths[month - 1] else { return nil }
        var days = (year - 1970) * 365 + leapYears(before: year) - leapYears(before: 1970)
        days += daysBeforeMonth[month - 1] + (month > 2 && isLeap(year) ? 1 : 0) + day - 1
        return Int64(days) * 86_400 + Int64(time)
    }
}
