import Testing
@testable import ParleyPush
import ParleyTestSupport

/// `retry-after` as providers send it (issue 14 item 11): the header line as libcurl hands
/// it over, delay-seconds, and the three HTTP date forms.
@Suite struct RetryAfterTests {
    /// 2027-01-15 08:00:00 UTC, in ms.
    let now: Int64 = 1_800_000_000_000

    @Test func headerLinesKeepNoLineEnding() throws {
        // libcurl passes each field with its CR LF; as a Swift String "\r\n" is one
        // Character, which is how "1\r\n" used to reach the number parser.
        let field = try #require(HTTPHeaderLine(Array("retry-after: 1\r\n".utf8)))
        #expect(field.name == "retry-after" && field.value == "1")
        let spaced = try #require(HTTPHeaderLine(Array("Retry-After:\t 60 \r\n".utf8)))
        #expect(spaced.name == "retry-after" && spaced.value == "60")
        let date = try #require(HTTPHeaderLine(Array("retry-after: Fri, 15 Jan 2027 08:01:00 GMT\r\n".utf8)))
        #expect(date.value == "Fri, 15 Jan 2027 08:01:00 GMT")
        #expect(HTTPHeaderLine(Array("HTTP/2 429 \r\n".utf8)) == nil)
        #expect(HTTPHeaderLine(Array("\r\n".utf8)) == nil)
        #expect(HTTPHeaderLine(Array(": value\r\n".utf8)) == nil)
        #expect(HTTPHeaderLine(Array("bad name: value\r\n".utf8)) == nil)
    }

    @Test func delaySeconds() {
        #expect(RetryAfter.seconds("1", nowMilliseconds: now) == 1)
        #expect(RetryAfter.seconds(" 60 ", nowMilliseconds: now) == 60)
        #expect(RetryAfter.seconds("0", nowMilliseconds: now) == 0)
        #expect(RetryAfter.seconds("007", nowMilliseconds: now) == 7)
        #expect(RetryAfter.seconds("99999999999999999999999999", nowMilliseconds: now) == RetryAfter.maximumSeconds)
        for refused in ["", " ", "-1", "+5", "1.5", "1 2", "0x10", "5s", "١"] {
            #expect(RetryAfter.seconds(refused, nowMilliseconds: now) == nil, "\(refused)")
        }
    }

    @Test func httpDatesCountFromNowRoundedUp() {
        // now is 08:00:00.000; 08:01:30 is 90 s ahead.
        #expect(RetryAfter.seconds("Fri, 15 Jan 2027 08:01:30 GMT", nowMilliseconds: now) == 90)
        #expect(RetryAfter.seconds("Friday, 15-Jan-27 08:01:30 GMT", nowMilliseconds: now) == 90)
        #expect(RetryAfter.seconds("Fri Jan 15 08:01:30 2027", nowMilliseconds: now) == 90)
        // Half a second into the second: 1.5 s ahead waits 2 s, never less.
        #expect(RetryAfter.seconds("Fri, 15 Jan 2027 08:00:02 GMT", nowMilliseconds: now + 500) == 2)
        // A date in the past asks for no wait.
        #expect(RetryAfter.seconds("Thu, 14 Jan 2027 08:00:00 GMT", nowMilliseconds: now) == 0)
        #expect(RetryAfter.seconds("Sun Nov  6 08:49:37 1994", nowMilliseconds: now) == 0)
    }

    @Test func malformedDatesAreRefused() {
        let refused = [
            "Fri, 31 Feb 2027 08:00:00 GMT",  // no 31 February
            "Fri, 15 Jan 2027 24:00:00 GMT",  // hour 24
            "Fri, 15 Jan 2027 08:60:00 GMT",
            "Fri, 15 Jan 2027 08:00:00 UTC",  // the zone is always GMT
            "Fri, 15 jan 2027 08:00:00 GMT",  // names are case-sensitive
            "Fry, 15 Jan 2027 08:00:00 GMT",
            "Fri, 5 Jan 2027 08:00:00 GMT",   // IMF-fixdate has two-digit days
            "Fri,  15 Jan 2027 08:00:00 GMT",
            "Friday, 15-Jan-2027 08:00:00 GMT",
            "Fri Jan 15 08:00:00 27",
            "Fri Jan 5 08:00:00 2027",        // asctime pads one-digit days with a space
            "Fri, 15 Jan 2027 08:00:00 GMT extra",
            "Fri, 15 Jan 2027 08:00:00",
            "Fri, 15 Jan 0000 08:00:00 GMT",
        ]
        for text in refused {
            #expect(HTTPDate.unixSeconds(text, nowSeconds: now / 1000) == nil, "\(text)")
        }
        #expect(HTTPDate.unixSeconds("Thu, 29 Feb 2024 00:00:00 GMT", nowSeconds: now / 1000) == 1_709_164_800)
        #expect(HTTPDate.unixSeconds("Thu, 01 Jan 1970 00:00:00 GMT", nowSeconds: now / 1000) == 0)
        #expect(HTTPDate.unixSeconds("Fri, 31 Dec 9999 23:59:59 GMT", nowSeconds: now / 1000) == 253_402_300_799)
    }

    @Test func everyFormAgreesWithFoundationsFormatter() {
        var random = SeededGenerator(seed: 14)
        for _ in 0..<2000 {
            // 1970-2100 for the four-digit forms; RFC 850's two-digit years within 49
            // years of now, where the century rule is unambiguous.
            let any = Int64(random.next() % 4_102_444_800)
            #expect(HTTPDate.unixSeconds(HTTPDateText.imfFixdate(unixSeconds: any), nowSeconds: now / 1000) == any)
            #expect(HTTPDate.unixSeconds(HTTPDateText.asctime(unixSeconds: any), nowSeconds: now / 1000) == any)
            let near = now / 1000 - 49 * 31_536_000 + Int64(random.next() % (98 * 31_536_000))
            #expect(HTTPDate.unixSeconds(HTTPDateText.rfc850(unixSeconds: near), nowSeconds: now / 1000) == near,
                    "\(HTTPDateText.rfc850(unixSeconds: near))")
        }
    }

    @Test func outcomesCarryTheWaitInEitherForm() {
        let busy = HTTPResponse(status: 503, headers: ["retry-after": "Fri, 15 Jan 2027 08:00:30 GMT"], body: Array(#"{"reason":"ServiceUnavailable"}"#.utf8))
        #expect(PushOutcome(provider: .apns, response: busy, now: now) == .retryable(reason: "ServiceUnavailable", retryAfter: 30))
        let quota = HTTPResponse(status: 429, headers: ["retry-after": "12"], body: Array(#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}"#.utf8))
        #expect(PushOutcome(provider: .fcm, response: quota, now: now) == .retryable(reason: "RESOURCE_EXHAUSTED", retryAfter: 12))
        let garbled = HTTPResponse(status: 429, headers: ["retry-after": "soon"], body: [])
        #expect(PushOutcome(provider: .apns, response: garbled, now: now) == .retryable(reason: "status 429", retryAfter: nil))
    }
}
