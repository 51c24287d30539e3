import ParleyAuth
import Testing

@Suite struct TokenKeyDateTests {
    @Test func knownDates() {
        #expect(TokenKeyDate(unixTime: 0)?.description == "19700101")
        #expect(TokenKeyDate(unixTime: 1_764_421_200)?.description == "20251129")
        #expect(TokenKeyDate(unixTime: 951_782_400)?.description == "20000229")   // leap day of a 400-year
        #expect(TokenKeyDate(unixTime: 4_107_542_400)?.description == "21000301") // 2100 is not leap
        #expect(TokenKeyDate(unixTime: 253_402_300_799)?.description == "99991231")
        #expect(TokenKeyDate(unixTime: 253_402_300_800) == nil)
        #expect(TokenKeyDate(unixTime: -1) == nil)
    }

    @Test func digits() {
        #expect(TokenKeyDate(digits: "20240229") != nil)
        #expect(TokenKeyDate(digits: "20230229") == nil)
        #expect(TokenKeyDate(digits: "21000229") == nil)
        #expect(TokenKeyDate(digits: "20251131") == nil)
        #expect(TokenKeyDate(digits: "20251300") == nil)
        #expect(TokenKeyDate(digits: "2025113") == nil)
        #expect(TokenKeyDate(digits: "2025-1-1") == nil)
        #expect(TokenKeyDate(digits: "19691231") == nil)
        #expect(TokenKeyDate(digits: "٢٠٢٥١١٢٩") == nil)
    }

    /// Day counts and dates agree for every fifth day from 1970 to 2200.
    @Test func dayCountRoundTrip() throws {
        var previous: TokenKeyDate? = nil
        var failures: [Int64] = []
        for day in stride(from: Int64(0), to: 84_000, by: 5) {
            guard let date = TokenKeyDate(unixTime: day * 86_400 + 43_200), date.daysSinceEpoch == day,
                  previous.map({ $0 < date }) ?? true, TokenKeyDate(digits: date.description) == date else {
                failures.append(day)
                continue
            }
            previous = date
        }
        #expect(failures.isEmpty, "first failing days: \(failures.prefix(5))")
    }
}
