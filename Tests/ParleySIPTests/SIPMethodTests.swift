import Testing
@testable import ParleySIP

@Suite struct SIPMethodTests {
    @Test func knownTokensRoundTrip() {
        for token in ["INVITE", "ACK", "BYE", "CANCEL", "OPTIONS", "REGISTER", "INFO", "UPDATE", "PRACK", "REFER", "NOTIFY", "SUBSCRIBE", "MESSAGE"] {
            #expect(SIPMethod(token: token).token == token)
            if case .extension = SIPMethod(token: token) { Issue.record("\(token) should be a named method") }
        }
    }

    /// Methods are case-sensitive (RFC 3261 §7.1): "invite" is an unknown extension method.
    @Test func methodsAreCaseSensitive() {
        #expect(SIPMethod(token: "invite") == .extension("invite"))
        #expect(SIPMethod(token: "NEWMETHOD").token == "NEWMETHOD")
    }
}
