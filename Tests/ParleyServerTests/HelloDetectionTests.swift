import Testing
@testable import ParleyServer

/// The 4006 decision reads a frame that failed the version check: it must read it as
/// every other frame is read (StrictJSONParser), so no input means one thing to the codec
/// and another to this check.
@Suite struct HelloDetectionTests {
    @Test func aHelloOfAnotherVersionIsNamedAHello() {
        #expect(CallEngine.namesHello(#"{"v":2,"type":"hello","id":"h"}"#))
        #expect(CallEngine.namesHello(#" {"type" : "hello"} "#))
    }

    @Test func anythingElseIsNot() {
        #expect(!CallEngine.namesHello(#"{"v":2,"type":"call.start"}"#))
        #expect(!CallEngine.namesHello(#"["hello"]"#))
        #expect(!CallEngine.namesHello(#"{"type":["hello"]}"#))
        #expect(!CallEngine.namesHello("hello"))
        #expect(!CallEngine.namesHello(""))
    }

    @Test func framesTheStrictParserRefusesAreNotHellos() {
        // Duplicate keys: Foundation's two readers disagree (JSONSerialization keeps the
        // last, JSONDecoder the first); the strict parser refuses them.
        #expect(!CallEngine.namesHello(#"{"type":"hello","type":"call.start"}"#))
        // A lone surrogate escape, and a trailing comma (JSONSerialization accepts the comma).
        #expect(!CallEngine.namesHello(#"{"type":"hello","x":"\ud800"}"#))
        #expect(!CallEngine.namesHello(#"{"type":"hello",}"#))
        // Nesting past the protocol's 32 levels.
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect(!CallEngine.namesHello(#"{"type":"hello","x":"# + deep + "}"))
    }
}
