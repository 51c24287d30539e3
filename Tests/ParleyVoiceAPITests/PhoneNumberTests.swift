import ParleyVoiceAPI
import Testing

@Suite struct PhoneNumberTests {
    @Test func acceptsNumbersWithAndWithoutPlusAndWritesE164() throws {
        #expect(try PhoneNumber(normalizing: "+46700000000").e164 == "+46700000000")
        #expect(try PhoneNumber(normalizing: "46700000000").e164 == "+46700000000")
        #expect(try PhoneNumber(normalizing: "+1 (555) 010-0199").e164 == "+15550100199")
        #expect(try PhoneNumber(normalizing: "44.20.7946.0000").digits == "442079460000")
        #expect(try PhoneNumber(normalizing: "+123456789012345").digits.count == 15)
    }

    @Test func refusesWhatIsNotE164() {
        for text in ["", "+", "+0700000000", "0700000000", "0046700000000", "+1234567890123456", "+4670000000a",
                     "++46700000000", " 46700000000", "-46700000000", "4", "+46 70\n0000000", "٤٦٧٠٠٠٠٠٠٠٠",
                     String(repeating: "1", count: 1000)] {
            #expect(throws: VoiceAPIError.self, "\(text)") { _ = try PhoneNumber(normalizing: text) }
        }
    }

    @Test func errorsAreOfTheirOwnKind() {
        do {
            _ = try PhoneNumber(normalizing: "0700")
            Issue.record("accepted")
        } catch {
            #expect(error.kind == .invalidPhoneNumber)
            #expect(error.description.contains("starts with 0"))
        }
    }
}
