import ParleyTestSupport
import ParleyWireCore
import Testing

@Suite struct JSONWriterTests {
    @Test func writesCompactJSONInMemberOrder() {
        var inner = JSONObject()
        inner.append("kind", "user")
        inner.append("n", 7)
        var object = JSONObject()
        object.append("z", "first")
        object.append("a", .object(inner))
        object.append("list", .array([.null, .bool(true), .number("-1.5e3"), .string("x")]))
        object.append("ok", false)
        #expect(JSONWriter.string(object) == #"{"z":"first","a":{"kind":"user","n":7},"list":[null,true,-1.5e3,"x"],"ok":false}"#)
        #expect(JSONWriter.serialize(.array([])) == Array("[]".utf8))
        #expect(JSONWriter.serialize(.object(JSONObject())) == Array("{}".utf8))
    }

    @Test func escapesOnlyWhatRFC8259Requires() {
        var object = JSONObject()
        object.append("k\"ey", "q\"b\\s/\n\t\u{1}é✓")
        #expect(JSONWriter.string(object) == #"{"k\"ey":"q\"b\\s/\n\t\u0001é✓"}"#)
    }

    @Test func whatItWritesTheStrictParserReadsBack() throws {
        var generator = SeededGenerator(seed: 5)
        for _ in 0..<300 {
            let value = randomValue(depth: 0, using: &generator)
            let parsed = try StrictJSONParser.parse(JSONWriter.serialize(value), maxDepth: 16)
            #expect(parsed == value)
        }
    }

    private func randomValue(depth: Int, using generator: inout SeededGenerator) -> JSONValue {
        switch Int.random(in: 0..<(depth < 4 ? 6 : 4), using: &generator) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .number(String(Int64.random(in: -1_000_000...1_000_000, using: &generator)))
        case 3:
            let scalars = (0..<Int.random(in: 0...8, using: &generator)).map { _ in
                Unicode.Scalar([0x22, 0x5c, 0x0a, 0x01, 0x41, 0xe9, 0x2713][Int.random(in: 0..<7, using: &generator)])!
            }
            return .string(String(String.UnicodeScalarView(scalars)))
        case 4:
            return .array((0..<Int.random(in: 0...4, using: &generator)).map { _ in randomValue(depth: depth + 1, using: &generator) })
        default:
            var object = JSONObject()
            for index in 0..<Int.random(in: 0...4, using: &generator) {
                object.append("k\(index)", randomValue(depth: depth + 1, using: &generator))
            }
            return .object(object)
        }
    }
}
