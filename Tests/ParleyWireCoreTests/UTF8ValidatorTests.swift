import Testing
import ParleyWireCore

@Suite struct UTF8ValidatorTests {
    // RFC 3629 §4 / Unicode Table 3-7: what well-formed UTF-8 excludes.
    @Test(arguments: [
        [0xc0, 0x80],             // overlong NUL
        [0xe0, 0x80, 0x80],       // overlong 3-byte
        [0xed, 0xa0, 0x80],       // UTF-16 surrogate U+D800
        [0xf4, 0x90, 0x80, 0x80], // above U+10FFFF
        [0xf5, 0x80, 0x80, 0x80],
        [0xe2, 0x82],             // cut short
        [0x80],                   // lone continuation
    ] as [[UInt8]])
    func rejectsIllFormed(bytes: [UInt8]) {
        #expect(!UTF8Validator.isValid(bytes))
        #expect(UTF8Validator.string(bytes) == nil)
    }

    @Test func acceptsWellFormedAndAgreesWithTheStandardLibrary() {
        let text = "Parley: € 𝄞 ü ok"
        #expect(UTF8Validator.isValid(Array(text.utf8)))
        #expect(UTF8Validator.string(Array(text.utf8)[...]) == text)
        #expect(UTF8Validator.isValid([UInt8]()))
    }

    @Test func sequenceSplitAcrossChunksIsCheckedAsOne() {
        var validator = UTF8Validator()
        let euro: [UInt8] = [0xe2, 0x82, 0xac]
        #expect(validator.validate(Array(euro.prefix(1))) == nil)
        #expect(!validator.isAtBoundary)
        #expect(validator.validate(Array(euro.dropFirst())) == nil)
        #expect(validator.isAtBoundary)
    }
}
