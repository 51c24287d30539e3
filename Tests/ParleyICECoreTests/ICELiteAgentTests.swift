import ParleyICECore
import ParleySTUN
import ParleyTestSupport
import Testing

/// One line of the lite agent's behaviour: an event and the action expected.
struct LiteRule: CustomStringConvertible, Sendable {
    enum Expected: Sendable {
        case success(selects: Bool)
        case error(code: Int, signed: Bool)
        case dropped(ICEDropReason)
    }
    let event: String
    let datagram: @Sendable () -> [UInt8]
    let expected: Expected
    var description: String { event }
}

@Suite("ICE lite agent (RFC 8445 §2.5, §7.3)")
struct ICELiteAgentTests {
    static let device = address("192.0.2.33", 50000)
    static let server = Fixture.serverV4

    /// Event -> expected action, in the spirit of an RFC's processing rules.
    static let rules: [LiteRule] = [
        LiteRule(event: "valid check -> success with XOR-MAPPED-ADDRESS, state checking", datagram: { Fixture.check() }, expected: .success(selects: false)),
        LiteRule(event: "valid check with USE-CANDIDATE -> success, pair selected, connected", datagram: { Fixture.check(useCandidate: true) }, expected: .success(selects: true)),
        LiteRule(event: "no USERNAME -> 400 unsigned", datagram: { Fixture.check(username: nil) }, expected: .error(code: 400, signed: false)),
        LiteRule(event: "no MESSAGE-INTEGRITY -> 400 unsigned", datagram: { Fixture.check(integrity: false) }, expected: .error(code: 400, signed: false)),
        LiteRule(event: "wrong local ufrag -> 401 unsigned", datagram: { Fixture.check(username: "xxxx:devU") }, expected: .error(code: 401, signed: false)),
        LiteRule(event: "wrong remote ufrag -> 401 unsigned", datagram: { Fixture.check(username: "srvU:xxxx") }, expected: .error(code: 401, signed: false)),
        LiteRule(event: "wrong password -> 401 unsigned", datagram: { Fixture.check(password: "wrong") }, expected: .error(code: 401, signed: false)),
        LiteRule(event: "unknown comprehension-required attribute -> 420 signed", datagram: { Fixture.check(extra: [.other(type: STUNAttributeType(0x7777), value: [1, 2, 3, 4])]) }, expected: .error(code: 420, signed: true)),
        LiteRule(event: "unknown comprehension-optional attribute -> success", datagram: { Fixture.check(extra: [.other(type: STUNAttributeType(0xC001), value: [1])]) }, expected: .success(selects: false)),
        LiteRule(event: "ICE-CONTROLLED (peer thinks it is controlled too) -> 487 signed", datagram: { Fixture.check(controlled: true) }, expected: .error(code: 487, signed: true)),
        LiteRule(event: "no FINGERPRINT -> dropped", datagram: { Fixture.check(fingerprint: false) }, expected: .dropped(.badFingerprint)),
        LiteRule(event: "bad FINGERPRINT -> dropped", datagram: {
            var bytes = Fixture.check()
            bytes[bytes.count - 1] ^= 0x01
            return bytes
        }, expected: .dropped(.badFingerprint)),
        LiteRule(event: "not STUN (RTP-looking bytes) -> dropped", datagram: { [0x80, 0x60] + [UInt8](repeating: 0, count: 30) }, expected: .dropped(.notSTUN)),
        LiteRule(event: "Binding success response -> dropped (a lite agent sends no requests)", datagram: {
            var message = STUNMessage(class: .success, method: .binding, transactionID: STUNTransactionID(bytes: [UInt8](repeating: 3, count: 12))!)
            try! message.append(.xorMappedAddress(device))
            return try! message.encoded(addingIntegrity: [.sha1(key: .shortTerm(password: "server-password-0123456"))], fingerprint: true)
        }, expected: .dropped(.unsupportedMessage)),
        LiteRule(event: "Binding indication -> dropped", datagram: {
            let message = STUNMessage(class: .indication, method: .binding, transactionID: STUNTransactionID(bytes: [UInt8](repeating: 4, count: 12))!)
            return try! message.encoded(fingerprint: true)
        }, expected: .dropped(.unsupportedMessage)),
    ]

    @Test("event -> action", arguments: rules)
    func rule(_ rule: LiteRule) throws {
        var agent = Fixture.lite()
        let request = try? STUNMessage(decoding: rule.datagram())
        let actions = agent.receive(rule.datagram(), from: Self.device, on: Self.server, now: .now)
        switch rule.expected {
        case .dropped(let reason):
            #expect(actions == [.dropped(reason, from: Self.device)])
            #expect(agent.state == .new)
        case .error(let code, let signed):
            #expect(actions.count == 1)
            guard case .send(let bytes, let from, let to)? = actions.first else { Issue.record("no answer"); return }
            #expect(from == Self.server && to == Self.device)
            let answer = try STUNMessage(decoding: bytes)
            #expect(answer.messageClass == .error && answer.transactionID == request?.transactionID)
            #expect(answer.errorCode?.code == code)
            #expect(answer.verifyFingerprint() == .valid)
            let verdict = answer.verifyMessageIntegrity(key: .shortTerm(password: Fixture.serverCredentials.password))
            #expect(verdict == (signed ? .valid : .absent))
            if code == 420 { #expect(answer.unknownAttributes == [STUNAttributeType(0x7777)]) }
            #expect(agent.state == .new && agent.validPairs.isEmpty)
        case .success(let selects):
            guard case .send(let bytes, _, let to)? = actions.first else { Issue.record("no answer"); return }
            #expect(to == Self.device)
            let answer = try STUNMessage(decoding: bytes)
            #expect(answer.messageClass == .success && answer.transactionID == request?.transactionID)
            #expect(answer.xorMappedAddress == Self.device)
            #expect(answer.verifyMessageIntegrity(key: .shortTerm(password: Fixture.serverCredentials.password)) == .valid)
            #expect(answer.verifyFingerprint() == .valid)
            #expect(agent.validPairs == [ICECandidatePair(local: Self.server, remote: Self.device)])
            let pair = ICECandidatePair(local: Self.server, remote: Self.device)
            if selects {
                #expect(Array(actions.dropFirst()) == [.stateChanged(.checking), .selectedPairChanged(pair), .stateChanged(.connected)])
                #expect(agent.selectedRemoteAddress == Self.device)
            } else {
                #expect(Array(actions.dropFirst()) == [.stateChanged(.checking)])
                #expect(agent.selectedPair == nil)
            }
        }
    }

    @Test("without the remote SDP yet, any peer ufrag is accepted")
    func remoteUnknown() {
        var agent = Fixture.lite(remote: nil)
        let actions = agent.receive(Fixture.check(username: "srvU:whoever"), from: Self.device, on: Self.server, now: .now)
        #expect(agent.state == .checking)
        #expect(actions.count == 2)
        var empty = Fixture.lite(remote: nil)
        let rejected = empty.receive(Fixture.check(username: "srvU:"), from: Self.device, on: Self.server, now: .now)
        #expect(empty.state == .new && rejected.count == 1)
    }

    @Test("RFC 8445 §8.1.1: the controlling agent's latest nomination wins")
    func latestNominationWins() {
        var agent = Fixture.lite()
        let other = address("192.0.2.34", 50001)
        let now = ICEInstant.now
        _ = agent.receive(Fixture.check(useCandidate: true, id: 1), from: Self.device, on: Self.server, now: now)
        #expect(agent.selectedRemoteAddress == Self.device)
        let actions = agent.receive(Fixture.check(useCandidate: true, id: 2), from: other, on: Self.server, now: now + .seconds(1))
        #expect(agent.selectedRemoteAddress == other)
        #expect(actions.contains(.selectedPairChanged(ICECandidatePair(local: Self.server, remote: other))))
        #expect(agent.validPairs.count == 2)
        // A check without USE-CANDIDATE does not move the selection back.
        _ = agent.receive(Fixture.check(id: 3), from: Self.device, on: Self.server, now: now + .seconds(2))
        #expect(agent.selectedRemoteAddress == other)
    }

    @Test("consent (lite): checks only from the selected address refresh it; 30 s of silence fails")
    func consentFromSelectedOnly() {
        var agent = Fixture.lite()
        let start = ICEInstant.now
        _ = agent.receive(Fixture.check(useCandidate: true), from: Self.device, on: Self.server, now: start)
        #expect(agent.nextDeadline == start + .seconds(10))
        // Checks from another address do not count as consent for the selected one.
        _ = agent.receive(Fixture.check(id: 9), from: address("192.0.2.99", 1), on: Self.server, now: start + .seconds(9))
        #expect(agent.handleTimeout(now: start + .seconds(10)) == [.stateChanged(.disconnected)])
        // A check from the selected address brings it back.
        let back = agent.receive(Fixture.check(id: 8), from: Self.device, on: Self.server, now: start + .seconds(12))
        #expect(back.last == .stateChanged(.connected))
        #expect(agent.handleTimeout(now: start + .seconds(41)) == [.stateChanged(.disconnected)])
        #expect(agent.handleTimeout(now: start + .seconds(42)) == [.stateChanged(.failed)])
        #expect(agent.nextDeadline == nil)
        #expect(agent.receive(Fixture.check(id: 7), from: Self.device, on: Self.server, now: start + .seconds(43)) == [.dropped(.inactive, from: Self.device)])
    }

    @Test("configurable consent timeout; close")
    func configurableAndClose() {
        var agent = Fixture.lite(configuration: .init(disconnectedAfter: .seconds(2), consentTimeout: .seconds(4)))
        let start = ICEInstant.now
        _ = agent.receive(Fixture.check(useCandidate: true), from: Self.device, on: Self.server, now: start)
        #expect(agent.handleTimeout(now: start + .seconds(4)) == [.stateChanged(.failed)])
        var other = Fixture.lite()
        #expect(other.close() == [.stateChanged(.closed)])
        #expect(other.close() == [])
    }

    @Test("every truncation of a valid check is dropped, never answered")
    func truncations() {
        let bytes = Fixture.check(useCandidate: true)
        for length in 0..<bytes.count {
            var agent = Fixture.lite()
            let actions = agent.receive(Array(bytes.prefix(length)), from: Self.device, on: Self.server, now: .now)
            #expect(actions.count == 1)
            if case .dropped = actions.first {} else { Issue.record("truncation to \(length) bytes was not dropped") }
        }
    }

    @Test("10k random datagrams and 10k mutated checks never trap, and only answers go out")
    func hostileInput() {
        var generator = SeededGenerator(seed: 0x1CE)
        var agent = Fixture.lite()
        let valid = Fixture.check(useCandidate: true)
        let now = ICEInstant.now
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = generator.bytes(generator.below(120))
                if bytes.count >= 8, round % 4 == 0 { bytes.replaceSubrange(4..<8, with: [0x21, 0x12, 0xA4, 0x42]) }
            } else {
                bytes = valid
                for _ in 0..<(1 + generator.below(3)) { bytes[generator.below(bytes.count)] = generator.byte() }
            }
            for action in agent.receive(bytes, from: Self.device, on: Self.server, now: now) {
                if case .send(let answer, _, _) = action { #expect((try? STUNMessage(decoding: answer)) != nil) }
            }
        }
    }
}

@Suite("Independently built check")
struct ICEIndependentCheckTests {
    /// Built with Python's hmac and zlib (also the fuzz seed
    /// `Fuzz/corpus/ice/check-use-candidate.bin`): USERNAME `srvU:devU`, PRIORITY,
    /// ICE-CONTROLLING, USE-CANDIDATE, MESSAGE-INTEGRITY with `server-password-0123456`, FINGERPRINT.
    static let hex = "000100482112a4420102030405060708090a0b0c00060009737276553a64657655000000002400046e7fffff802a00080123456789abcdef0025000000080014fc3a5cafa2922f108451663e24b1073a4e578a5080280004bdea8325"

    @Test("the lite agent accepts it, selects the pair and answers with the source")
    func accepted() throws {
        let bytes = try #require(hexBytes(Self.hex))
        var agent = Fixture.lite()
        let source = address("198.51.100.7", 62000)
        let actions = agent.receive(bytes, from: source, on: Fixture.serverV4, now: .now)
        #expect(agent.selectedRemoteAddress == source)
        guard case .send(let answer, _, _)? = actions.first else { Issue.record("no answer"); return }
        let message = try STUNMessage(decoding: answer)
        #expect(message.messageClass == .success)
        #expect(message.transactionID.bytes == Array(1...12))
        #expect(message.xorMappedAddress == source)
    }
}

/// Lower-case hex text to bytes; nil on odd length or a non-hex digit.
func hexBytes(_ text: String) -> [UInt8]? {
    var out: [UInt8] = []
    var chars = Array(text.utf8)[...]
    while chars.count >= 2 {
        guard let byte = UInt8(String(decoding: chars.prefix(2), as: UTF8.self), radix: 16) else { return nil }
        out.append(byte)
        chars = chars.dropFirst(2)
    }
    return chars.isEmpty ? out : nil
}
