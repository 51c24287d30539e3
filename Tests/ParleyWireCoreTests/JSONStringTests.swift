import Foundation
import Testing
import ParleyWireCore

@Suite struct JSONStringTests {
    @Test("RFC 8259 §7: quote, backslash and U+0000-U+001F escaped; the rest as UTF-8")
    func escapes() {
        #expect(JSONString.quoted("plain") == #""plain""#)
        #expect(JSONString.quoted("a\"b\\c") == #""a\"b\\c""#)
        #expect(JSONString.quoted("\n\r\t\u{08}\u{0C}") == #""\n\r\t\b\f""#)
        #expect(JSONString.quoted("\u{00}\u{1F}") == #""\u0000\u001f""#)
        #expect(JSONString.quoted("κόσμε 𝄞 \u{7F}") == "\"κόσμε 𝄞 \u{7F}\"")
        #expect(JSONString.quoted("") == #""""#)
    }

    @Test("Every string of random scalars reads back as itself through Foundation")
    func roundTripsThroughAReader() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let scalars = (0..<Int.random(in: 0...40, using: &generator)).compactMap { _ in
                Unicode.Scalar(UInt32.random(in: 0...0x2FFF, using: &generator))
            }
            let text = String(String.UnicodeScalarView(scalars))
            let decoded = try JSONSerialization.jsonObject(with: Data(JSONString.quoted(text).utf8), options: .fragmentsAllowed) as? String
            #expect(decoded == text)
        }
    }
}
