import ParleyVoiceAPI
import Testing

@Suite struct MenuSessionTests {
    static let t0 = ContinuousClock.now

    static func at(_ milliseconds: Int64) -> ContinuousClock.Instant {
        t0.advanced(by: .milliseconds(milliseconds))
    }

    static func session(barge: Bool? = nil, _ menus: [Menu]) throws -> MenuSession {
        MenuSession(action: try RunMenuAction(barge: barge, menus: menus))
    }

    static let ivr = [
        Menu(id: "main", mainPrompt: "#tts[1 sales, 2 PIN, 99 secret]", repeatPrompt: "#tts[Again]", repeats: 1, maxDigits: 2,
             timeoutMilliseconds: 3000,
             options: [MenuOption(dtmf: "1", action: .return("sales")), MenuOption(dtmf: "2", action: .menu("pin")),
                       MenuOption(dtmf: "99", action: .return("secret"))]),
        Menu(id: "pin", mainPrompt: "#tts[Enter your PIN]", maxDigits: 4, timeoutMilliseconds: 2000),
    ]

    @Test func anOptionReturnsItsValue() throws {
        var session = try Self.session(Self.ivr)
        #expect(session.start(at: Self.at(0)) == [.play("#tts[1 sales, 2 PIN, 99 secret]")])
        #expect(session.deadline == nil)
        #expect(session.promptFinished(at: Self.at(1000)).isEmpty)
        #expect(session.deadline == Self.at(4000))
        #expect(session.key("1", at: Self.at(1500)) == [.finished(MenuResult(menuID: "main", kind: .return, value: "sales"))])
        #expect(session.deadline == nil)
        #expect(session.key("2", at: Self.at(1600)).isEmpty)
    }

    @Test func aKeyDuringThePromptBargesIn() throws {
        var session = try Self.session(Self.ivr)
        _ = session.start(at: Self.at(0))
        #expect(session.key("9", at: Self.at(200)) == [.stopPrompt])
        #expect(session.deadline == Self.at(3200))
        #expect(session.key("9", at: Self.at(400)) == [.finished(MenuResult(menuID: "main", kind: .return, value: "secret"))])
    }

    @Test func withoutBargeKeysDuringThePromptAreIgnored() throws {
        var session = try Self.session(barge: false, Self.ivr)
        _ = session.start(at: Self.at(0))
        #expect(session.key("1", at: Self.at(200)).isEmpty)
        #expect(session.keys.isEmpty)
        _ = session.promptFinished(at: Self.at(900))
        #expect(session.key("1", at: Self.at(1000)) == [.finished(MenuResult(menuID: "main", kind: .return, value: "sales"))])
    }

    @Test func menuLeadsToASubmenuWhoseKeysAreASequence() throws {
        var session = try Self.session(Self.ivr)
        _ = session.start(at: Self.at(0))
        _ = session.promptFinished(at: Self.at(100))
        #expect(session.key("2", at: Self.at(200)) == [.play("#tts[Enter your PIN]")])
        #expect(session.menu.id == "pin")
        _ = session.promptFinished(at: Self.at(1000))
        for (index, key) in "123".enumerated() { #expect(session.key(key, at: Self.at(1100 + Int64(index) * 100)).isEmpty) }
        #expect(session.deadline == Self.at(3300))
        #expect(session.key("4", at: Self.at(1400)) == [.finished(MenuResult(menuID: "pin", kind: .sequence, value: "1234"))])
    }

    @Test func aShortSequenceEndsAtTheInterDigitTimeout() throws {
        var session = try Self.session([Menu(id: "main", maxDigits: 6, timeoutMilliseconds: 1000)])
        #expect(session.start(at: Self.at(0)).isEmpty)
        #expect(session.deadline == Self.at(1000))
        _ = session.key("4", at: Self.at(500))
        _ = session.key("2", at: Self.at(900))
        #expect(session.timeout(at: Self.at(1000)).isEmpty)
        #expect(session.timeout(at: Self.at(1900)) == [.finished(MenuResult(menuID: "main", kind: .sequence, value: "42"))])
    }

    @Test func timeoutsReplayThenEnd() throws {
        var session = try Self.session(Self.ivr)
        _ = session.start(at: Self.at(0))
        _ = session.promptFinished(at: Self.at(1000))
        #expect(session.timeout(at: Self.at(3999)).isEmpty)
        #expect(session.timeout(at: Self.at(4000)) == [.play("#tts[Again]")])
        _ = session.promptFinished(at: Self.at(5000))
        #expect(session.timeout(at: Self.at(8000)) == [.finished(MenuResult(menuID: "main", kind: .timeout, value: ""))])
        #expect(session.result?.kind == .timeout)
    }

    @Test func wrongKeysCountAsInvalidInput() throws {
        var session = try Self.session(Self.ivr)
        _ = session.start(at: Self.at(0))
        _ = session.promptFinished(at: Self.at(100))
        #expect(session.key("5", at: Self.at(200)).isEmpty)
        #expect(session.key("5", at: Self.at(300)) == [.play("#tts[Again]")])
        _ = session.promptFinished(at: Self.at(1000))
        _ = session.key("9", at: Self.at(1100))
        #expect(session.timeout(at: Self.at(4100)) == [.finished(MenuResult(menuID: "main", kind: .invalidInput, value: "9"))])
    }

    @Test func hangupEndsTheMenuOnceAndOtherKeysAreIgnored() throws {
        var session = try Self.session(Self.ivr)
        _ = session.start(at: Self.at(0))
        #expect(session.key("x", at: Self.at(10)).isEmpty)
        #expect(session.hangup() == [.finished(MenuResult(menuID: "main", kind: .hangup, value: ""))])
        #expect(session.hangup().isEmpty)
        #expect(session.timeout(at: Self.at(100_000)).isEmpty)
    }

    @Test func maxTimeoutBoundsAnAttempt() throws {
        var session = try Self.session([Menu(id: "main", repeats: 0, maxDigits: 8, timeoutMilliseconds: 1000, maxTimeoutMilliseconds: 2500)])
        _ = session.start(at: Self.at(0))
        _ = session.key("1", at: Self.at(900))
        _ = session.key("2", at: Self.at(1800))
        #expect(session.deadline == Self.at(2500))
        #expect(session.timeout(at: Self.at(2500)) == [.finished(MenuResult(menuID: "main", kind: .sequence, value: "12"))])
    }
}
