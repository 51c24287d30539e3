import Foundation
import ParleyStore
import Testing

/// `CallbackSettings`' rules (URL, CA file, timeout, events) and its JSON form, without a store.
@Suite struct CallbackSettingsTests {
    @Test(arguments: [
        "http://backend.example.com", "https://backend.example.com/", "HTTPS://Backend.Example.com/sinch/callback",
        "http://127.0.0.1:9000/cb", "https://[::1]:8443/cb", "https://[2001:db8::1]/x?y=z&w=1", "http://localhost",
        "https://a-b.c-d.example:1/p/a/t/h;x=1", "http://backend.example.com?tenant=7",
    ])
    func acceptsHTTPAndHTTPSURLs(_ url: String) {
        #expect(CallbackSettings.urlProblem(url) == nil)
        #expect(CallbackSettings(url: url).problem == nil)
    }

    @Test(arguments: [
        ("", "is not an http:// or https:// URL"),
        ("backend.example.com/cb", "is not an http:// or https:// URL"),
        ("ftp://backend.example.com/", "is not an http:// or https:// URL"),
        ("https://", "has no host"),
        ("https:///cb", "has no host"),
        ("https://:8443/cb", "has no host"),
        ("https://backend.example.com:0/", "has a port that is not 1-65535"),
        ("https://backend.example.com:65536/", "has a port that is not 1-65535"),
        ("https://backend.example.com:/", "has a port that is not 1-65535"),
        ("https://backend.example.com:443x/", "has a port that is not 1-65535"),
        ("https://user:pw@backend.example.com/", "has a user name or password (give neither in the URL)"),
        ("https://backend.example.com/cb#frag", "has a fragment (#...)"),
        ("https://back end.example.com/", "holds spaces, controls or non-ASCII characters"),
        ("https://backend.example.com/\u{7}", "holds spaces, controls or non-ASCII characters"),
        ("https://bäckend.example.com/", "holds spaces, controls or non-ASCII characters"),
        ("https://-backend.example.com/", "has a malformed host"),
        ("https://backend..example.com/", "has a malformed host"),
        ("https://back_end.example.com/", "has a malformed host"),
        ("https://[::1/", "has an IPv6 address without its ]"),
        ("https://[::1]x/", "has characters after its IPv6 address"),
        ("https://[zz]/", "has a malformed IPv6 address"),
    ])
    func refusesOtherURLsWithTheReason(_ url: String, _ reason: String) {
        #expect(CallbackSettings.urlProblem(url) == reason)
    }

    @Test func boundsTheURLAndHostLength() {
        let longest = "https://backend.example.com/" + String(repeating: "a", count: CallbackSettings.maxURLBytes - 28)
        #expect(longest.utf8.count == CallbackSettings.maxURLBytes)
        #expect(CallbackSettings.urlProblem(longest) == nil)
        #expect(CallbackSettings.urlProblem(longest + "a") == "is longer than 2048 bytes")
        let longHost = "https://" + Array(repeating: String(repeating: "a", count: 63), count: 5).joined(separator: ".") + "/"
        #expect(CallbackSettings.urlProblem(longHost) == "has a host name longer than 253 bytes")
        let longLabel = "https://" + String(repeating: "a", count: 64) + ".example/"
        #expect(CallbackSettings.urlProblem(longLabel) == "has a malformed host")
    }

    @Test func checksTheOtherSettings() {
        let url = "https://backend.example.com/cb"
        #expect(CallbackSettings(url: url, caFile: "/etc/ca.pem").problem == nil)
        #expect(CallbackSettings(url: url, caFile: "").problem == "CA file \"\" is empty")
        #expect(CallbackSettings(url: url, caFile: "/a\u{0}b").problem == "CA file \"/a?b\" holds a NUL")
        #expect(CallbackSettings(url: "http://backend.example.com/cb", caFile: "/etc/ca.pem").problem == "a CA file needs an https:// URL")
        #expect(CallbackSettings(url: url, timeoutMilliseconds: 100).problem == nil)
        #expect(CallbackSettings(url: url, timeoutMilliseconds: 30_000).problem == nil)
        #expect(CallbackSettings(url: url, timeoutMilliseconds: 99).problem == "timeout 99 ms is outside 100...30000 ms")
        #expect(CallbackSettings(url: url, timeoutMilliseconds: 30_001).problem == "timeout 30001 ms is outside 100...30000 ms")
        #expect(CallbackSettings(url: url, events: []).problem == "no event is sent (name at least one of ice,ace,dice,pie,notify)")
        #expect(CallbackSettings(url: "ftp://x").problem == "URL \"ftp://x\" is not an http:// or https:// URL")
    }

    @Test func parsesEventLists() {
        #expect(CallbackSettings.events(parsing: "ice,ace,dice,pie,notify") == .success(Set(CallbackEvent.allCases)))
        #expect(CallbackSettings.events(parsing: "DiCE, ice") == .success([.dice, .ice]))
        #expect(CallbackSettings.events(parsing: "ice,ring")
                == .failure(.init("unknown event \"ring\" (expected ice,ace,dice,pie,notify)")))
        #expect(CallbackSettings.events(parsing: "ice,,ace")
                == .failure(.init("an empty event name in \"ice,,ace\" (expected ice,ace,dice,pie,notify)")))
        #expect(CallbackSettings.events(parsing: "") == .failure(.init("an empty event name in \"\" (expected ice,ace,dice,pie,notify)")))
        #expect(CallbackSettings.events(parsing: "ice,ICE") == .failure(.init("event ice is named twice")))
    }

    @Test func jsonListsEventsInTheirOrderAndLeavesOutAMissingCAFile() throws {
        let settings = CallbackSettings(url: "https://b.example/cb", timeoutMilliseconds: 500, events: [.notify, .ice, .ace])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let text = String(decoding: try encoder.encode(settings), as: UTF8.self)
        #expect(text == #"{"appCalls":false,"events":["ice","ace","notify"],"timeoutMs":500,"url":"https://b.example/cb"}"#)
        #expect(try JSONDecoder().decode(CallbackSettings.self, from: Data(text.utf8)) == settings)
        var withCA = settings
        withCA.caFile = "/etc/ca.pem"
        #expect(try JSONDecoder().decode(CallbackSettings.self, from: try encoder.encode(withCA)) == withCA)
    }

    @Test func eventsOrderAsListed() {
        #expect(CallbackEvent.allCases.shuffled().sorted() == [.ice, .ace, .dice, .pie, .notify])
        #expect(CallbackSettings(url: "http://x", events: [.pie, .ace]).orderedEvents == [.ace, .pie])
        #expect(CallbackSettings(url: "http://x", events: [.pie]).sends(.pie))
        #expect(!CallbackSettings(url: "http://x", events: [.pie]).sends(.ice))
    }
}
