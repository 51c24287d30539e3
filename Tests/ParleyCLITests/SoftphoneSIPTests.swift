import ParleySDK
import Testing
@testable import ParleyCLI

/// `parley call` toward phone numbers and SIP addresses: how the destination is read, the
/// rules for `--header`, `--dtmf` and `--cli`, and what is printed of the far side.
@Suite struct SoftphoneSIPTests {
    static let base = SoftphoneOptionsTests.base
    static let id = SoftphoneControllerTests.id

    static func parse(_ arguments: [String]) throws(SoftphoneUsageError) -> SoftphoneOptions {
        try SoftphoneOptions.parse(command: "call", arguments + base)
    }

    @Test(arguments: [
        (["bob"], "bob", ParleyCallRemoteKind.user),
        (["user_1024="], "user_1024=", .user),
        (["+4615550101"], "+4615550101", .phone),
        (["--phone", "+4615550101"], "+4615550101", .phone),
        (["alice@example.test"], "alice@example.test", .sip),
        (["sip:alice@example.test:5070;transport=tcp"], "alice@example.test:5070;transport=tcp", .sip),
        (["SIP:alice@192.0.2.4"], "alice@192.0.2.4", .sip),
        (["--sip", "alice@example.test"], "alice@example.test", .sip),
        (["--sip=sip:alice@[2001:db8::1]:5061"], "alice@[2001:db8::1]:5061", .sip),
    ])
    func destinations(arguments: [String], callee: String, kind: ParleyCallRemoteKind) throws {
        #expect(try Self.parse(arguments).mode == .call(callee: callee, kind: kind))
    }

    @Test func aUserIsAsBefore() throws {
        let options = try Self.parse(["bob", "--header", "topic=billing"])
        #expect(options.mode == .call(callee: "bob") && options.mode == .call(callee: "bob", kind: .user))
        #expect(options.headers == ["topic": "billing"] && options.cli == nil)
    }

    @Test func phoneCallsTakeXHeadersDTMFAndACLI() throws {
        let options = try Self.parse(["+4615550101", "--header", "x-account=77", "--header", "X-Order=1", "--dtmf", "1#", "--cli", "+46812345678"])
        #expect(options.headers == ["x-account": "77", "X-Order": "1"] && options.dtmf == "1#" && options.cli == "+46812345678")
        #expect(try Self.parse(["--sip", "alice@example.test", "--dtmf", "*9"]).dtmf == "*9")
    }

    @Test(arguments: [
        (["+0701234567"], "phone number '+0701234567' is not valid: must be an E.164 number"),
        (["+46 70"], "phone number '+46 70' is not valid: character ' '"),
        (["--phone", "4615550101"], "phone number '4615550101' is not valid: must be an E.164 number"),
        (["alice@"], "SIP address 'alice@' is not valid: must name a domain after '@'"),
        (["sip:example.test"], "must be user@domain[:port][;transport=udp|tcp|tls], optionally after sip: or sips:"),
        (["--sip", "bob"], "SIP address 'bob' must be user@domain"),
        (["alice@example.test;transport=sctp"], "the only parameter allowed after the domain is ;transport=udp, ;transport=tcp or ;transport=tls"),
        (["bob", "--phone", "+4615550101"], "one destination to call: a user, --phone NUMBER or --sip ADDRESS, not 2"),
        (["--phone", "+4615550101", "--sip", "a@b"], "one destination to call"),
        (["+4615550101", "--header", "topic=x"], "--header topic: calls to phone numbers and SIP addresses take only headers named x-..."),
        (["a@example.test", "--header", "x-=1"], "--header x-: calls to phone numbers and SIP addresses take only headers named x-..."),
        (["bob", "--dtmf", "1"], "--dtmf needs a call to a phone number or SIP address: app-to-app calls carry no DTMF"),
        (["bob", "--cli", "+46812345678"], "--cli is the caller id of calls to phone numbers"),
        (["a@example.test", "--cli", "+46812345678"], "--cli is the caller id of calls to phone numbers"),
        (["+4615550101", "--cli", "0812345678"], "--cli '0812345678' is not a caller id"),
    ])
    func usageErrors(arguments: [String], message: String) {
        do {
            _ = try Self.parse(arguments)
            Issue.record("accepted \(arguments)")
        } catch {
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test func theDestinationFlagsAreForCallOnly() {
        for flag in ["--phone", "--sip", "--cli"] {
            do {
                _ = try SoftphoneOptions.parse(command: "listen", SoftphoneOptionsTests.base + [flag, "+4615550101"])
                Issue.record("listen took \(flag)")
            } catch {
                #expect(error.message == "unknown option '\(flag)' for parley listen")
            }
        }
    }

    @Test func aPhoneCallIsPlacedPrintedAndHearsTheFarSide() throws {
        var script = try SoftphoneControllerTests.Script("call", ["+4615550101", "--header", "x-a=1", "--dtmf", "1#"])
        _ = script.start()
        #expect(script.at(10, .clientStarted).last == .placeCall(callee: "+4615550101", headers: ["x-a": "1"], kind: .phone))
        #expect(script.at(11, .callPlaced(callID: Self.id)) == [.print("00:00:00.011 calling phone number +4615550101 (call \(Self.id)) headers x-a=1")])
        #expect(script.at(60, .rang(callID: Self.id, responseHeaders: ["x-queue": "support"]))
            == [.print("00:00:00.060 ringing"), .print("00:00:00.060 response headers x-queue=support")])
        #expect(script.at(900, .answered(callID: Self.id, responseHeaders: ["x-queue": "support"])) == [.print("00:00:00.900 answered")],
                "the same headers are not printed twice")
        #expect(script.at(1000, .established(callID: Self.id)) == [.print("00:00:01.000 established"), .sendDTMF(callID: Self.id, tones: "1#")])
        #expect(script.at(1500, .dtmfReceived(callID: Self.id, digits: "4#")) == [.print("00:00:01.500 dtmf received 4#")])
        #expect(script.at(1600, .dtmfReceived(callID: SoftphoneControllerTests.other, digits: "9")) == [], "another call's")
    }

    @Test func newAnswerHeadersArePrintedWithTheRing() throws {
        var script = try SoftphoneControllerTests.Script("call", ["sip:alice@example.test"])
        _ = script.start()
        #expect(script.at(10, .clientStarted).last == .placeCall(callee: "alice@example.test", headers: [:], kind: .sip))
        #expect(script.at(11, .callPlaced(callID: Self.id)) == [.print("00:00:00.011 calling SIP address alice@example.test (call \(Self.id))")])
        #expect(script.at(60, .rang(callID: Self.id)) == [.print("00:00:00.060 ringing")])
        #expect(script.at(900, .answered(callID: Self.id, responseHeaders: ["X-Agent": "4711"]))
            == [.print("00:00:00.900 answered"), .print("00:00:00.900 response headers X-Agent=4711")])
    }

    @Test func jsonLines() {
        let json = SoftphoneFormatter(json: true)
        let time: Int64 = 1_764_417_601_234
        #expect(json.line(.calling(callee: "+4615550101", headers: ["x-a": "1"], kind: .phone), callID: Self.id, timeMs: time)
            == #"{"event":"calling","timeMs":1764417601234,"callId":"\#(Self.id)","to":"+4615550101","headers":{"x-a":"1"},"kind":"phone"}"#)
        #expect(json.line(.calling(callee: "bob", headers: [:]), callID: Self.id, timeMs: time)
            == #"{"event":"calling","timeMs":1764417601234,"callId":"\#(Self.id)","to":"bob","headers":{}}"#, "as before for a user")
        #expect(json.line(.responseHeaders(["X-Agent": "4711", "x-b": "2"]), callID: Self.id, timeMs: time)
            == #"{"event":"responseHeaders","timeMs":1764417601234,"callId":"\#(Self.id)","headers":{"X-Agent":"4711","x-b":"2"}}"#)
        #expect(json.line(.dtmfReceived(digits: "4#"), callID: Self.id, timeMs: time)
            == #"{"event":"dtmfReceived","timeMs":1764417601234,"callId":"\#(Self.id)","digits":"4#"}"#)
    }
}
