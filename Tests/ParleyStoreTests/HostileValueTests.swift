import ParleyCallModel
import ParleyStore
import ParleyTestSupport
import Testing

/// Values reach the database only as bound parameters: quotes, SQL text, NULs and odd UTF-8 are
/// stored and matched as the plain strings they are.
@Suite struct HostileValueTests {
    static let awkward = [
        "'; DROP TABLE calls; --", "\" OR 1=1 --", "a%", "_", "with\u{0}nul", "ünïcødé 🎧", "", String(repeating: "x", count: 10_000),
    ]

    @Test(arguments: StoreFactory.all) func awkwardStringsRoundTripAndMatchExactly(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.open()
        try store.createApplication(key: "'k'", name: "\u{0}", secret: "s'", at: T.base)
        for (index, user) in Self.awkward.enumerated() {
            try store.recordUserSeen(applicationKey: "'k'", userId: user, at: T.base)
            try store.createCall(id: callID(index), applicationKey: "'k'", caller: user, callee: "bob", startedTime: T.at(Int64(index)))
            try store.finishCall(id: callID(index), cause: .error, error: CallError(code: "x", message: user), at: T.at(100))
        }
        for (index, user) in Self.awkward.enumerated() {
            #expect(try store.isKnownUser(applicationKey: "'k'", userId: user))
            let page = try store.calls(CallQuery(applicationKey: "'k'", user: user))
            #expect(page.calls.map(\.callId) == [callID(index)], "user \(user.prefix(20))")
            #expect(page.calls.first?.error?.message == user)
        }
        #expect(try store.application(key: "'k'")?.name == "\u{0}")
        #expect(try !store.isKnownUser(applicationKey: "'k'", userId: "with"))
        #expect(try store.calls(CallQuery(applicationKey: "'k'", limit: 1000)).calls.count == Self.awkward.count)
    }

    @Test(arguments: StoreFactory.all) func randomCursorsNeverTrap(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        try store.completedCall(callID(1), start: T.base)
        var generator = SeededGenerator(seed: 99)
        let alphabet = Array("0123456789.-+ e".utf8)
        for _ in 0..<2000 {
            let length = generator.below(25)
            let text = String(decoding: (0..<length).map { _ in alphabet[generator.below(alphabet.count)] }, as: UTF8.self)
            do {
                _ = try store.calls(CallQuery(applicationKey: "app", cursor: text))
            } catch {
                #expect(error.kind == .invalidArgument)
            }
        }
    }
}
