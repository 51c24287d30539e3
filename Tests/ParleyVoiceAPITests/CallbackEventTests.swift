import ParleyVoiceAPI
import ParleyWireCore
import Testing

@Suite struct CallbackEventTests {
    static func header() throws -> CallbackHeader {
        CallbackHeader(callID: "c-1", callResourceURL: "/calling/v1/calls/id/c-1",
                       timestamp: try SinchTimestamp(parsing: "2026-01-02T03:04:05Z"), custom: "cust",
                       applicationKey: "app-1")
    }

    static func text(_ event: CallbackEvent) -> String {
        String(decoding: event.body, as: UTF8.self)
    }

    @Test func writesAnICEInSinchsShapeWithE164Numbers() throws {
        let ice = IncomingCallEvent(header: try Self.header(), cli: "46700000001",
                                    to: Destination(kind: .did, endpoint: "46700000000"), domain: .pstn,
                                    originationType: .pstn, callHeaders: [CallHeader(key: "k", value: "v")])
        #expect(Self.text(.incoming(ice)) == #"{"event":"ice","callid":"c-1","callResourceUrl":"/calling/v1/calls/id/c-1","timestamp":"2026-01-02T03:04:05Z","version":1,"custom":"cust","cli":"+46700000001","to":{"type":"did","endpoint":"+46700000000"},"domain":"pstn","applicationKey":"app-1","originationType":"pstn","callHeaders":[{"key":"k","value":"v"}]}"#)
    }

    @Test func writesAnAppCallsICEWithItsUser() throws {
        let ice = IncomingCallEvent(header: try Self.header(), to: Destination(kind: .number, endpoint: "+15550100"),
                                    domain: .pstn, originationType: .mxp, user: "alice")
        let decoded = try CallbackEvent.decode(CallbackEvent.incoming(ice).body)
        #expect(decoded == .incoming(ice))
        #expect(Self.text(.incoming(ice)).hasSuffix(#""originationType":"mxp","user":"alice"}"#))
    }

    @Test func writesADiCE() throws {
        let dice = DisconnectedCallEvent(header: try Self.header(), result: .answered, reason: .callerHangup,
                                         durationSeconds: 42, from: "+46700000001",
                                         to: Destination(kind: .username, endpoint: "bob"))
        #expect(Self.text(.disconnected(dice)) == #"{"event":"dice","callid":"c-1","callResourceUrl":"/calling/v1/calls/id/c-1","timestamp":"2026-01-02T03:04:05Z","version":1,"custom":"cust","reason":"CALLERHANGUP","result":"ANSWERED","to":{"type":"username","endpoint":"bob"},"applicationKey":"app-1","duration":42,"from":"+46700000001"}"#)
    }

    @Test func writesAPIEAndANotify() throws {
        let pie = PromptInputEvent(header: try Self.header(), menuResult: MenuResult(menuID: "main", kind: .return, value: "sales"))
        #expect(Self.text(.promptInput(pie)).contains(#""menuResult":{"menuId":"main","type":"return","value":"sales","inputMethod":"dtmf"}"#))
        let notify = NotifyEvent(callID: "c-1", type: "recording_finished", destination: "file:///var/lib/parley/rec/c-1.wav")
        #expect(Self.text(.notify(notify)) == #"{"event":"notify","callid":"c-1","version":1,"type":"recording_finished","destination":"file:///var/lib/parley/rec/c-1.wav"}"#)
    }

    @Test func everyEventReadsBackAsWritten() throws {
        let header = try Self.header()
        let events: [CallbackEvent] = [
            .incoming(IncomingCallEvent(header: header, userRate: try Money(currencyID: "USD", amount: "0.0100"), cli: "+1555",
                                        to: Destination(kind: .sip, endpoint: "sip:bob@example.com"), domain: .sip,
                                        originationType: .sip, rdnis: "+1666", callHeaders: [CallHeader(key: "a", value: "")])),
            .answered(AnsweredCallEvent(header: header)),
            .disconnected(DisconnectedCallEvent(header: header, result: .noAnswer, reason: .timeout, durationSeconds: 0,
                                                debit: try Money(currencyID: nil, amount: "0"),
                                                userRate: try Money(currencyID: "EUR", amount: "1.5e-2"))),
            .promptInput(PromptInputEvent(header: header, menuResult: MenuResult(menuID: "pin", kind: .sequence, value: "1234#",
                                                                                 inputMethod: nil))),
            .notify(NotifyEvent(callID: nil, conferenceID: "room", type: "x", custom: "y")),
        ]
        for event in events {
            #expect(try CallbackEvent.decode(event.body) == event, "\(Self.text(event))")
        }
        #expect(events.map(\.name) == [.ice, .ace, .dice, .pie, .notify])
        #expect(events.map(\.expectsSVAML) == [true, true, false, true, false])
    }

    @Test func readsSinchsSpellingsAndNormalisesNumbers() throws {
        let body = #"{"event":"ICE","callid":"x","timestamp":"2014-09-24T10:59:41.120Z","version":1,"to":{"type":"userName","endpoint":"bob"},"cli":"46700000001","domain":"MXP","futureField":{"a":[1,2]}}"#
        guard case .incoming(let ice) = try CallbackEvent.decode(Array(body.utf8)) else { Issue.record("not ICE"); return }
        #expect(ice.to == Destination(kind: .username, endpoint: "bob"))
        #expect(ice.domain == .mxp)
        #expect(ice.header.timestamp.unixMilliseconds == 1_411_556_381_120)
        let numbered = #"{"event":"dice","callid":"x","timestamp":"2014-09-24T10:59:41Z","result":"BUSY","reason":"N/A","to":{"type":"number","endpoint":"46 700 000 000"}}"#
        guard case .disconnected(let dice) = try CallbackEvent.decode(Array(numbered.utf8)) else { Issue.record("not DiCE"); return }
        #expect(dice.to?.endpoint == "+46700000000")
        #expect(dice.reason == .notApplicable && dice.result == .busy && dice.durationSeconds == 0)
    }

    @Test func refusesBadCallbacksWithTheFieldNamed() {
        let cases: [(String, VoiceAPIError.Kind, String)] = [
            (#"{"event":"ring","callid":"x"}"#, .unknownEvent, "event"),
            (#"{"callid":"x"}"#, .invalidField, "event"),
            (#"{"event":"ace","timestamp":"2014-09-24T10:59:41Z"}"#, .invalidField, "callid"),
            (#"{"event":"ace","callid":"x"}"#, .invalidField, "timestamp"),
            (#"{"event":"ace","callid":"x","timestamp":"yesterday"}"#, .invalidField, "timestamp"),
            (#"{"event":"ace","callid":7,"timestamp":"2014-09-24T10:59:41Z"}"#, .invalidField, "callid"),
            (#"{"event":"ace","callid":"x","timestamp":"2014-09-24T10:59:41Z","version":"1"}"#, .invalidField, "version"),
            (#"{"event":"ace","callid":"x","timestamp":"2014-09-24T10:59:41Z","version":1.5}"#, .invalidField, "version"),
            (#"{"event":"dice","callid":"x","timestamp":"2014-09-24T10:59:41Z","result":"DONE","reason":"TIMEOUT"}"#, .invalidField, "result"),
            (#"{"event":"dice","callid":"x","timestamp":"2014-09-24T10:59:41Z","result":"BUSY","reason":"TIMEOUT","duration":-1}"#, .invalidField, "duration"),
            (#"{"event":"ice","callid":"x","timestamp":"2014-09-24T10:59:41Z","to":{"type":"number","endpoint":"07000"}}"#, .invalidPhoneNumber, "to.endpoint"),
            (#"{"event":"ice","callid":"x","timestamp":"2014-09-24T10:59:41Z","to":{"type":"fax","endpoint":"1"}}"#, .invalidField, "to.type"),
            (#"{"event":"ice","callid":"x","timestamp":"2014-09-24T10:59:41Z","callHeaders":[{"value":"v"}]}"#, .invalidField, "callHeaders[0].key"),
            (#"{"event":"ice","callid":"x","timestamp":"2014-09-24T10:59:41Z","callHeaders":["k"]}"#, .invalidField, "callHeaders[0]"),
            (#"{"event":"ice","callid":"x","timestamp":"2014-09-24T10:59:41Z","userRate":{"amount":"1"}}"#, .invalidField, "userRate.amount"),
            (#"{"event":"pie","callid":"x","timestamp":"2014-09-24T10:59:41Z"}"#, .invalidField, "menuResult"),
            (#"{"event":"pie","callid":"x","timestamp":"2014-09-24T10:59:41Z","menuResult":{"menuId":"m","type":"pressed"}}"#, .invalidField, "menuResult.type"),
            (#"{"event":"notify"}"#, .invalidField, "type"),
            (#"[]"#, .malformedJSON, ""),
            (#"{"event":"ace","event":"ace"}"#, .malformedJSON, ""),
            (#"{"event":"ace",}"#, .malformedJSON, ""),
        ]
        for (body, kind, field) in cases {
            do {
                let event = try CallbackEvent.decode(Array(body.utf8))
                Issue.record("accepted \(body) as \(event)")
            } catch {
                #expect(error.kind == kind, "\(body): \(error)")
                #expect(error.field == field, "\(body): \(error)")
            }
        }
    }

    @Test func refusesHugeInputsAndHugeStrings() {
        let huge = Array(#"{"event":"ace","callid":""#.utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 70_000) + Array(#""}"#.utf8)
        #expect(throws: VoiceAPIError.self) { _ = try CallbackEvent.decode(huge) }
        let longID = #"{"event":"ace","callid":""# + String(repeating: "a", count: 300) + #"","timestamp":"2014-09-24T10:59:41Z"}"#
        do {
            _ = try CallbackEvent.decode(Array(longID.utf8))
            Issue.record("accepted")
        } catch {
            #expect(error.kind == .invalidField && error.field == "callid")
        }
        let deep = String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)
        #expect(throws: VoiceAPIError.self) { _ = try CallbackEvent.decode(Array(deep.utf8)) }
    }

    @Test func neverCrashesOnMangledCallbacks() throws {
        var random = SeededGeneratorForTests(seed: 7)
        let seeds = [
            Array(SinchCallbackExample.body.utf8),
            CallbackEvent.incoming(IncomingCallEvent(header: try Self.header(), to: Destination(kind: .number, endpoint: "+1555"),
                                                     callHeaders: [CallHeader(key: "k", value: "v")])).body,
        ]
        var refused = 0
        for round in 0..<3000 {
            var bytes = seeds[round % seeds.count]
            for _ in 0...random.below(4) {
                let index = random.below(bytes.count)
                switch random.below(3) {
                case 0: bytes[index] = random.byte()
                case 1: bytes.remove(at: index)
                default: bytes.insert(random.byte(), at: index)
                }
            }
            do { _ = try CallbackEvent.decode(bytes) } catch { refused += 1 }
        }
        #expect(refused > 1000)
    }
}
