import Testing
import ParleyWireCore

@Suite struct StrictJSONParserTests {
    private func parse(_ text: String, maxDepth: Int = 16) throws(StrictJSONParser.SyntaxError) -> JSONValue {
        try StrictJSONParser.parse(Array(text.utf8), maxDepth: maxDepth)
    }

    @Test func readsEveryKindOfValueWithNumbersAsTheirLiterals() throws {
        let value = try parse(#" {"a":[1,-2,3.5e1,true,null,"\u00e9\ud83d\ude00"],"b":{}} "#)
        #expect(value["a"] == .array([.number("1"), .number("-2"), .number("3.5e1"), .bool(true), .null, .string("é😀")]))
        #expect(value["b"] == .object(JSONObject()))
        #expect(value["missing"] == nil)
        guard case .object(let object) = value else { Issue.record("not an object"); return }
        #expect(object.members.map(\.key) == ["a", "b"])
    }

    @Test func integersStayExact() throws {
        #expect(try parse("9223372036854775807").integerValue == Int64.max)
        #expect(try parse("-9223372036854775808").integerValue == Int64.min)
        #expect(try parse("9223372036854775808").integerValue == nil)
        #expect(try parse("99999999999999999999999") == .number("99999999999999999999999"))
        #expect(try parse("1.0").integerValue == nil)
        #expect(try parse("1e3").integerValue == nil)
        #expect(try parse("-0").integerValue == 0)
    }

    @Test(arguments: [
        #"{"a":1,"a":2}"#, "{", #"{"a":01}"#, #"["\ud800"]"#, #"["\udc00\ud800"]"#, "[1,]", #""\u+123""#, "[1] x",
        "\"\u{01}\"", "{\"a\":1,}", "tru", "-", "1e", "1.", "\u{FEFF}{}", #"{"\u0061":1,"a":2}"#, "",
    ])
    func refuses(_ text: String) {
        #expect(throws: StrictJSONParser.SyntaxError.self, "\(text)") { try parse(text) }
    }

    @Test func refusesInvalidUTF8AtItsOffset() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xE2, 0x82]] {
            do {
                _ = try StrictJSONParser.parse(bytes, maxDepth: 4)
                Issue.record("accepted \(bytes)")
            } catch {
                #expect(error.kind == .syntax)
                #expect((1...2).contains(error.offset), "\(bytes): \(error)")
            }
        }
    }

    @Test func duplicateKeysAtAnyDepthNameTheKeyAndItsOffset() {
        do {
            _ = try parse(#"{"x":[{"k":1,"k":2}]}"#)
            Issue.record("accepted")
        } catch {
            #expect(error.kind == .duplicateKey("k"))
            #expect(error.offset == 13)
            #expect(error.reason == #"duplicate key "k""#)
        }
        // Past eight members the parser switches to a set; duplicates are still found.
        let many = (0..<20).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        #expect(throws: StrictJSONParser.SyntaxError.self) { try parse("{" + many + ",\"k3\":0}") }
        #expect(throws: Never.self) { try parse("{" + many + "}") }
    }

    @Test func nestingIsBoundedBeforeDescending() throws {
        _ = try parse(String(repeating: "[", count: 16) + String(repeating: "]", count: 16))
        for depth in [17, 100_000] {
            do {
                _ = try parse(String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
                Issue.record("accepted depth \(depth)")
            } catch {
                #expect(error.kind == .tooDeep)
                #expect(error.offset == 16)
            }
        }
    }

    @Test func errorsSayWhereAndWhat() {
        do {
            _ = try parse(#"{"a":1 "b":2}"#)
            Issue.record("accepted")
        } catch {
            #expect(error.offset == 7)
            #expect(error.reason == "expected ',' or '}' in an object, found '\"'")
        }
    }
}
