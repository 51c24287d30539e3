import Testing
import ParleySessionCore

/// The 4006 decision reads a frame that failed the version check: it must read it as
/// every other frame is read (StrictJSONParser), so no input means one thing to the codec
/// and another to this check.
@Suite struct HelloDetectionTests {
    @Test func aHelloOfAnotherVersionIsNamedAHello() {
        #expect(ServerSessionCore.namesHello(#"{"v":2,"type":"hello","id":"h"}"#))
        #expect(ServerSessionCore.namesHello(#" {"type" : "hello"} "#))
    }

    @Test func anythingElseIsNot() {
        #expect(!ServerSessionCore.namesHello(#"{"v":2,"type":"call.start"}"#))
        #expect(!ServerSessionCore.namesHello(#"["hello"]"#))
        #expect(!ServerSessionCore.namesHello(#"{"type":["hello"]}"#))
        #expect(!ServerSessionCore.namesHello("hello"))
        #expect(!ServerSessionCore.namesHello(""))
    }

    @Test func framesTheStrictParserRefusesAreNotHellos() {
        // Duplicate keys: Foundation's two readers disagree (JSONSerialization keeps the
        // last, JSONDecoder the first); the strict parser refuses them.
        #expect(!ServerSessionCore.namesHello(#"{"type":"hello","type":"call.start"}"#))
        // A lone surrogate escape, and a trailing comma (JSONSerialization accepts the comma).
        #expect(!ServerSessionCore.namesHello(#"{"type":"hello","x":"\ud800"}"#))
        #expect(!ServerSessionCore.namesHello(#"{"type":"hello",}"#))
        // Nesting past the protocol's 32 levels.
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect(!ServerSessionCore.namesHello(#"{"type":"hello","x":"# + deep + "}"))
    }
}
