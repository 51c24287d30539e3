import ParleyVoiceAPI
import Testing

@Suite struct SinchTimestampTests {
    @Test func writesUTCToTheSecondAndMillisecondsWhenThereAreSome() throws {
        #expect(try SinchTimestamp(unixSeconds: 0).text == "1970-01-01T00:00:00Z")
        #expect(try SinchTimestamp(unixSeconds: 1_411_556_381).text == "2014-09-24T10:59:41Z")
        #expect(try SinchTimestamp(unixMilliseconds: 1_411_556_381_250).text == "2014-09-24T10:59:41.250Z")
        #expect(try SinchTimestamp(unixSeconds: 951_782_400).text == "2000-02-29T00:00:00Z")
        #expect(try SinchTimestamp(unixSeconds: -1).text == "1969-12-31T23:59:59Z")
        #expect(try SinchTimestamp(unixMilliseconds: -1).text == "1969-12-31T23:59:59.999Z")
    }

    @Test func readsWhatItWritesOverManyYears() throws {
        var random = SeededGeneratorForTests(seed: 3)
        for _ in 0..<2000 {
            let milliseconds = Int64(random.below(300_000_000)) * 1_000_000 - 60_000_000_000_000 + Int64(random.below(1000))
            let timestamp = try SinchTimestamp(unixMilliseconds: milliseconds)
            #expect(try SinchTimestamp(parsing: timestamp.text) == timestamp, "\(timestamp.text)")
        }
    }

    @Test func readsOffsetsAndFractions() throws {
        let expected = try SinchTimestamp(unixSeconds: 1_411_556_381)
        #expect(try SinchTimestamp(parsing: "2014-09-24T12:59:41+02:00") == expected)
        #expect(try SinchTimestamp(parsing: "2014-09-24T05:29:41-0530") == expected)
        #expect(try SinchTimestamp(parsing: "2014-09-24t10:59:41z") == expected)
        #expect(try SinchTimestamp(parsing: "2014-09-24T10:59:41.5Z").unixMilliseconds == 1_411_556_381_500)
        #expect(try SinchTimestamp(parsing: "2014-09-24T10:59:41.123456789Z").unixMilliseconds == 1_411_556_381_123)
    }

    @Test func refusesWhatIsNotADateTimeWithAZone() {
        for text in ["", "2014-09-24", "2014-09-24T10:59:41", "2014-09-24 10:59:41Z", "2014-13-01T00:00:00Z",
                     "2014-02-29T00:00:00Z", "2014-09-31T00:00:00Z", "2014-09-24T24:00:00Z", "2014-09-24T10:60:00Z",
                     "2014-09-24T10:59:60Z", "2014-09-24T10:59:41.Z", "2014-09-24T10:59:41+2400", "2014-09-24T10:59:41Zx",
                     "0000-01-01T00:00:00Z", "+2014-09-24T10:59:41Z", "２014-09-24T10:59:41Z",
                     String(repeating: "9", count: 100)] {
            #expect(throws: VoiceAPIError.self, "\(text)") { _ = try SinchTimestamp(parsing: text) }
        }
        #expect(throws: VoiceAPIError.self) { _ = try SinchTimestamp(unixSeconds: .max) }
        #expect(throws: VoiceAPIError.self) { _ = try SinchTimestamp(unixMilliseconds: .min) }
    }
}
