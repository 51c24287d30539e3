import ParleyVoiceAPI
import ParleyWireCore
import Testing

@Suite struct SVAMLResponseTests {
    static func decode(_ text: String, answering context: SVAMLContext? = nil) throws -> SVAMLResponse {
        try SVAMLResponse.decode(Array(text.utf8), answering: context)
    }

    static func failure(_ text: String, answering context: SVAMLContext? = nil) -> VoiceAPIError? {
        do {
            let response = try SVAMLResponse.decode(Array(text.utf8), answering: context)
            Issue.record("accepted \(text) as \(response)")
            return nil
        } catch {
            return error
        }
    }

    @Test func readsAnICEAnswerWithInstructionsAndConnectPstn() throws {
        let response = try Self.decode(#"{"instructions":[{"name":"say","text":"Hello","locale":"en-US"},{"name":"setCookie","key":"k","value":"v"},{"name":"answer"}],"action":{"name":"ConnectPSTN","number":"46700000000","cli":"+46 700 000 001","maxDuration":600,"dialTimeout":30,"dtmf":"ww1234#","suppressCallbacks":false}}"#,
                                       answering: .ice)
        #expect(response.instructions == [.say(text: "Hello", locale: "en-US"), .setCookie(key: "k", value: "v"), .answer])
        guard case .connectPstn(let action) = response.action else { Issue.record("\(response.action)"); return }
        #expect(action.number?.e164 == "+46700000000")
        #expect(action.cli?.e164 == "+46700000001")
        #expect(action.maxDurationSeconds == 600 && action.dialTimeoutSeconds == 30)
        #expect(action.dtmf == "ww1234#" && action.suppressCallbacks == false)
    }

    @Test func matchesActionAndInstructionNamesInAnyCase() throws {
        for name in ["connectMxp", "connectMXP", "CONNECTMXP", "connectmxp"] {
            let response = try Self.decode(#"{"action":{"name":"\#(name)","destination":{"type":"userName","endpoint":"bob"},"callHeaders":[{"key":"a","value":"b"}]}}"#)
            #expect(response.action == .connectMxp(ConnectMxpAction(destination: Destination(kind: .username, endpoint: "bob"),
                                                                    callHeaders: [CallHeader(key: "a", value: "b")])))
        }
        #expect(try Self.decode(#"{"instructions":[{"name":"PLAYFILES","ids":["welcome.wav"]}],"action":{"name":"Hangup"}}"#).instructions
            == [.playFiles(ids: ["welcome.wav"], locale: nil)])
    }

    @Test func readsEveryActionAndWritesItBack() throws {
        let responses: [SVAMLResponse] = [
            SVAMLResponse(action: .connectMxp(ConnectMxpAction(destination: Destination(kind: .username, endpoint: "alice")))),
            SVAMLResponse(action: .connectPstn(ConnectPstnAction(number: try PhoneNumber(normalizing: "+15550100"), locale: "en-US"))),
            SVAMLResponse(action: .connectSip(ConnectSipAction(destination: Destination(kind: .sip, endpoint: "sip:pbx@example.com"),
                                                               maxDurationSeconds: 60, cli: "+15550100", transport: .tls,
                                                               callHeaders: [CallHeader(key: "X-Case", value: "42")],
                                                               moh: "ring", suppressCallbacks: true))),
            SVAMLResponse(action: .connectConf(ConnectConfAction(conferenceID: "room-1", moh: "music"))),
            SVAMLResponse(instructions: [.startRecording(options: nil), .sendDtmf("1w2"), .stopRecording], action: .hangup),
            SVAMLResponse(action: .continue),
            SVAMLResponse(action: .park(ParkAction(introPrompt: "#tts[Please hold]", holdPrompt: "hold.wav", locale: "en-US",
                                                   maxDurationSeconds: 300))),
            SVAMLResponse(action: .runMenu(try RunMenuAction(barge: false, locale: "en-US", enableVoice: false, menus: [
                Menu(id: "main", mainPrompt: "#tts[Press 1 for sales, 2 for a PIN]", repeatPrompt: "#tts[Again]", repeats: 2,
                     maxDigits: 1, timeoutMilliseconds: 5000, maxTimeoutMilliseconds: 20000,
                     options: [MenuOption(dtmf: "1", action: .return("sales")), MenuOption(dtmf: "2", action: .menu("pin"))]),
                Menu(id: "pin", mainPrompt: "#tts[Enter your PIN]", maxDigits: 4),
            ]))),
        ]
        for response in responses {
            let text = String(decoding: response.body, as: UTF8.self)
            #expect(try SVAMLResponse.decode(response.body) == response, "\(text)")
        }
        #expect(String(decoding: SVAMLResponse(instructions: [.say(text: "Bye", locale: nil)], action: .hangup).body, as: UTF8.self)
            == #"{"instructions":[{"name":"say","text":"Bye"}],"action":{"name":"hangup"}}"#)
        #expect(String(decoding: responses[7].body, as: UTF8.self).contains(#""options":[{"dtmf":"1","action":"return(sales)"},{"dtmf":"2","action":"menu(pin)"}]"#))
    }

    @Test func anUnknownActionIsInvalidSVAMLAction() throws {
        let error = try #require(Self.failure(#"{"action":{"name":"transfer","to":"+1555"}}"#))
        #expect(error.kind == .unknownAction)
        #expect(error.field == "action.name")
        #expect(error.diceReason == .invalidSVAMLAction)
        #expect(error.description.contains("\"transfer\" is not an action"))
    }

    @Test func malformedOrOversizedAnswersAreCallbackErrors() throws {
        for text in ["", "not json", "{", #"{"action":{"name":"hangup"}} x"#, #"{"action":{"name":"hangup"},"action":{"name":"continue"}}"#,
                     "[]", "\"hangup\"", #"{"action":{"name":"hangup"},}"#] {
            let error = try #require(Self.failure(text), "\(text)")
            #expect(error.kind == .malformedJSON, "\(text)")
            #expect(error.diceReason == .callbackError)
        }
        let huge = #"{"action":{"name":"hangup"},"pad":""# + String(repeating: " ", count: VoiceAPILimits.maxBodyBytes) + #""}"#
        let error = try #require(Self.failure(huge))
        #expect(error.kind == .tooLarge && error.diceReason == .callbackError)
    }

    @Test func exactlyOneActionObject() throws {
        #expect(Self.failure(#"{"instructions":[]}"#)?.kind == .missingAction)
        #expect(Self.failure(#"{"action":null}"#)?.kind == .missingAction)
        #expect(Self.failure(#"{"action":[{"name":"hangup"},{"name":"continue"}]}"#)?.kind == .invalidField)
        #expect(Self.failure(#"{"action":"hangup"}"#)?.kind == .invalidField)
        #expect(Self.failure(#"{"action":{}}"#)?.field == "action.name")
    }

    @Test func refusesBadFieldsWithTheirPath() {
        let cases: [(String, VoiceAPIError.Kind, String)] = [
            (#"{"instructions":[{"name":"dance"}],"action":{"name":"hangup"}}"#, .unknownInstruction, "instructions[0].name"),
            (#"{"instructions":{"name":"say"},"action":{"name":"hangup"}}"#, .invalidField, "instructions"),
            (#"{"instructions":[{"name":"say"}],"action":{"name":"hangup"}}"#, .invalidField, "instructions[0].text"),
            (#"{"instructions":[{"name":"say","text":"\#(String(repeating: "é", count: 601))"}],"action":{"name":"hangup"}}"#, .invalidField, "instructions[0].text"),
            (#"{"instructions":[{"name":"playFiles","ids":[]}],"action":{"name":"hangup"}}"#, .invalidField, "instructions[0].ids"),
            (#"{"instructions":[{"name":"playFiles","ids":["a",3]}],"action":{"name":"hangup"}}"#, .invalidField, "instructions[0].ids[1]"),
            (#"{"instructions":[{"name":"sendDtmf","value":"12x"}],"action":{"name":"hangup"}}"#, .invalidField, "instructions[0].value"),
            (#"{"instructions":[{"name":"setCookie","value":"v"}],"action":{"name":"hangup"}}"#, .invalidField, "instructions[0].key"),
            (#"{"action":{"name":"connectPstn","number":"0700"}}"#, .invalidPhoneNumber, "action.number"),
            (#"{"action":{"name":"connectPstn","number":46700000000}}"#, .invalidField, "action.number"),
            (#"{"action":{"name":"connectPstn","maxDuration":14401}}"#, .invalidField, "action.maxDuration"),
            (#"{"action":{"name":"connectPstn","dialTimeout":"30"}}"#, .invalidField, "action.dialTimeout"),
            (#"{"action":{"name":"connectPstn","suppressCallbacks":"yes"}}"#, .invalidField, "action.suppressCallbacks"),
            (#"{"action":{"name":"connectMxp","destination":{"type":"number","endpoint":"+1555"}}}"#, .invalidField, "action.destination.type"),
            (#"{"action":{"name":"connectSip"}}"#, .invalidField, "action.destination"),
            (#"{"action":{"name":"connectSip","destination":{"type":"sip","endpoint":"a b@c"}}}"#, .invalidField, "action.destination.endpoint"),
            (#"{"action":{"name":"connectSip","destination":{"type":"sip","endpoint":"a@b"},"transport":"SCTP"}}"#, .invalidField, "action.transport"),
            (#"{"action":{"name":"connectConf"}}"#, .invalidField, "action.conferenceId"),
            (#"{"action":{"name":"connectConf","conferenceId":"\#(String(repeating: "r", count: 65))"}}"#, .invalidField, "action.conferenceId"),
            (#"{"action":{"name":"runMenu"}}"#, .invalidField, "action.menus"),
            (#"{"action":{"name":"runMenu","menus":[]}}"#, .invalidField, "action.menus"),
            (#"{"action":{"name":"runMenu","menus":[{"id":"other"}]}}"#, .invalidField, "action.menus"),
            (#"{"action":{"name":"runMenu","mainMenu":"x","menus":[{"id":"main"}]}}"#, .invalidField, "action.mainMenu"),
            (#"{"action":{"name":"runMenu","menus":[{"id":"main"},{"id":"main"}]}}"#, .invalidField, "action.menus[1].id"),
            (#"{"action":{"name":"runMenu","menus":[{"id":"main","options":[{"dtmf":"1","action":"menu(nowhere)"}]}]}}"#, .invalidField, "action.menus[0].options[0].action"),
            (#"{"action":{"name":"runMenu","menus":[{"id":"main","options":[{"dtmf":"1","action":"goto(x)"}]}]}}"#, .invalidField, "action.menus[0].options[0].action"),
            (#"{"action":{"name":"runMenu","menus":[{"id":"main","options":[{"dtmf":"1","action":"return(a"}]}]}}"#, .invalidField, "action.menus[0].options[0].action"),
            (#"{"action":{"name":"runMenu","menus":[{"id":"main","options":[{"dtmf":"x","action":"return(a)"}]}]}}"#, .invalidField, "action.menus[0].options[0].dtmf"),
            (#"{"action":{"name":"runMenu","menus":[{"id":"main","options":[{"dtmf":"1","action":"return(a)"},{"dtmf":"1","action":"return(b)"}]}]}}"#, .invalidField, "action.menus[0].options[1].dtmf"),
            (#"{"action":{"name":"runMenu","menus":[{"id":"main","maxDigits":0}]}}"#, .invalidField, "action.menus[0].maxDigits"),
            (#"{"action":{"name":"runMenu","menus":[{"id":"main","timeoutMills":-5}]}}"#, .invalidField, "action.menus[0].timeoutMills"),
            (#"{"action":{"name":"park","maxDuration":1e3}}"#, .invalidField, "action.maxDuration"),
        ]
        for (text, kind, field) in cases {
            guard let error = Self.failure(text) else { continue }
            #expect(error.kind == kind, "\(text): \(error)")
            #expect(error.field == field, "\(text): \(error)")
            #expect(error.diceReason == .invalidSVAMLAction, "\(text)")
        }
    }

    @Test func boundsCountsAndLengths() throws {
        let say = #"{"name":"say","text":"x"}"#
        let many = #"{"instructions":["# + Array(repeating: say, count: VoiceAPILimits.maxInstructions + 1).joined(separator: ",") + #"],"action":{"name":"hangup"}}"#
        #expect(Self.failure(many)?.field == "instructions")
        let fewEnough = #"{"instructions":["# + Array(repeating: say, count: VoiceAPILimits.maxInstructions).joined(separator: ",") + #"],"action":{"name":"hangup"}}"#
        #expect(try Self.decode(fewEnough).instructions.count == VoiceAPILimits.maxInstructions)
        let menus = (0...VoiceAPILimits.maxMenus).map { #"{"id":"m\#($0)"}"# }.joined(separator: ",")
        #expect(Self.failure(#"{"action":{"name":"runMenu","mainMenu":"m0","menus":["# + menus + "]}}")?.field == "action.menus")
        let prompt = String(repeating: "p", count: VoiceAPILimits.maxTextBytes + 1)
        #expect(Self.failure(#"{"action":{"name":"park","holdPrompt":""# + prompt + #""}}"#)?.field == "action.holdPrompt")
        // 600 characters of several bytes each are within the say limit: it counts characters.
        let longSay = String(repeating: "🙂", count: VoiceAPILimits.maxSayCharacters)
        #expect(try Self.decode(#"{"instructions":[{"name":"say","text":""# + longSay + #""}],"action":{"name":"hangup"}}"#).instructions.count == 1)
    }

    @Test func aMenuMayStartAnywhereNamed() throws {
        let response = try Self.decode(##"{"action":{"name":"runMenu","mainMenu":"start","menus":[{"id":"start","options":[{"dtmf":"#","action":"RETURN(done)"}]}]}}"##)
        guard case .runMenu(let menu) = response.action else { Issue.record("\(response.action)"); return }
        #expect(menu.firstMenuID == "start")
        #expect(menu.menu("start")?.options.first?.action == .return("done"))
        #expect(throws: VoiceAPIError.self) { _ = try RunMenuAction(menus: [Menu(id: "x")]) }
    }

    @Test func checksWhatEachCallbackMayBeAnsweredWith() throws {
        #expect(try Self.decode(#"{"action":{"name":"continue"}}"#, answering: .ace).action == .continue)
        #expect(Self.failure(#"{"action":{"name":"continue"}}"#, answering: .ice)?.diceReason == .invalidSVAMLAction)
        #expect(Self.failure(#"{"action":{"name":"connectMxp"}}"#, answering: .pie)?.field == "action.name")
        #expect(Self.failure(#"{"instructions":[{"name":"answer"}],"action":{"name":"hangup"}}"#, answering: .ace)?.field == "instructions[0].name")
        #expect(try Self.decode(#"{"instructions":[{"name":"say","text":"x"}],"action":{"name":"park"}}"#, answering: .callUpdate).action == .park(ParkAction()))
        #expect(Self.failure(#"{"action":{"name":"runMenu","menus":[{"id":"main"}]}}"#, answering: .callUpdate) != nil)
    }

    @Test func neverCrashesOnMangledAnswers() throws {
        var random = SeededGeneratorForTests(seed: 11)
        let seed = Array(#"{"instructions":[{"name":"say","text":"Hi"},{"name":"playFiles","ids":["a.wav"]}],"action":{"name":"runMenu","menus":[{"id":"main","maxDigits":4,"options":[{"dtmf":"1","action":"return(x)"},{"dtmf":"2","action":"menu(main)"}]}]}}"#.utf8)
        _ = try SVAMLResponse.decode(seed)
        var refused = 0
        for _ in 0..<3000 {
            var bytes = seed
            for _ in 0...random.below(3) {
                let index = random.below(bytes.count)
                switch random.below(3) {
                case 0: bytes[index] = random.byte()
                case 1: bytes.remove(at: index)
                default: bytes.insert(bytes[random.below(bytes.count)], at: index)
                }
            }
            do { _ = try SVAMLResponse.decode(bytes) } catch { refused += 1 }
        }
        #expect(refused > 1000)
    }
}
