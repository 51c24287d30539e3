import Foundation
import ParleyCallModel
import Testing

@testable import ParleyServer

/// Reading `ttsCallout` and `customCallout` requests: what a well-formed one asks the
/// server to do, and every refusal (400 malformed, 501 not built) in the Sinch shape.
@Suite struct RESTServerCalloutsTests {
    private static func parse(_ json: String) -> Result<ServerCalloutRequest, RESTAPI.CalloutRefusal> {
        RESTAPI.serverCallout(from: Array(json.utf8))
    }

    /// The refusal's status, Sinch error code and message.
    private static func refusal(_ json: String) -> (status: Int, code: Int?, message: String)? {
        guard case .failure(let refusal) = parse(json) else { return nil }
        let body = (try? JSONSerialization.jsonObject(with: Data(refusal.response.body))) as? [String: Any]
        return (refusal.response.status, body?["errorCode"] as? Int, body?["message"] as? String ?? "")
    }

    @Test func ttsCalloutToANumberSpeaksItsTextThenHangsUp() throws {
        let request = try Self.parse(#"""
            {"method": "ttsCallout", "ttsCallout": {"destination": {"type": "number", "endpoint": "46 70 123 45 67"},
             "cli": "+46700000001", "locale": "en-US", "text": "Your code is 1 2 3", "custom": "order-7",
             "enableAce": false, "enableDice": true, "domain": "pstn"}}
            """#).get()
        #expect(request.method == .ttsCallout)
        #expect(request.destination == .phone("+46701234567"))
        #expect(request.cli == "+46700000001")
        #expect(request.custom == "order-7")
        #expect(request.steps == [.say(text: "Your code is 1 2 3", locale: "en-US")])
        #expect(request.ending == .hangup)
        #expect(!request.sendsACE && request.sendsDiCE)
    }

    @Test func ttsCalloutToASIPAddressPlaysDigitsTextAndPrompts() throws {
        let request = try Self.parse(##"""
            {"method": "TTSCALLOUT", "ttsCallout": {"destination": {"type": "sip", "endpoint": "sip:bob@127.0.0.1:5070"},
             "text": "hello", "prompts": "#tts[and goodbye]", "dtmf": "w12#"}}
            """##).get()
        #expect(request.destination == .sip("bob@127.0.0.1:5070"))
        #expect(request.steps == [.sendDTMF("w12#"), .say(text: "hello", locale: nil), .prompt("#tts[and goodbye]", locale: nil)])
        #expect(!request.sendsACE && !request.sendsDiCE)
    }

    @Test func customCalloutPlacesItsICEConnectAndRunsICEThenACE() throws {
        let ice = #"{\"instructions\":[{\"name\":\"setCookie\",\"key\":\"k\",\"value\":\"v\"}],\"action\":{\"name\":\"connectPstn\",\"number\":\"+46709999999\",\"cli\":\"+46700000002\",\"maxDuration\":30,\"dialTimeout\":20}}"#
        let ace = #"{\"instructions\":[{\"name\":\"say\",\"text\":\"this is parley\",\"locale\":\"en-GB\"}],\"action\":{\"name\":\"hangup\"}}"#
        let request = try Self.parse(#"{"method": "customCallout", "customCallout": {"ice": "\#(ice)", "ace": "\#(ace)", "custom": "c", "maxDuration": 10}}"#).get()
        #expect(request.method == .customCallout)
        #expect(request.destination == .phone("+46709999999"))
        #expect(request.cli == "+46700000002")
        #expect(request.steps == [.setCookie(key: "k", value: "v"), .say(text: "this is parley", locale: "en-GB")])
        #expect(request.ending == .hangup)
        #expect(request.maximumLength == .seconds(10), "the smaller of maxDuration and connectPstn's")
        #expect(request.ringTimeout == .seconds(20))
        #expect(!request.sendsACE, "an inline ace replaces the ACE callback")
        #expect(request.sendsDiCE)
    }

    @Test func customCalloutWithoutACEAsksTheBackendAndStaysUp() throws {
        let ice = #"{\"action\":{\"name\":\"connectSip\",\"destination\":{\"type\":\"sip\",\"endpoint\":\"sip:pbx@10.0.0.5\"},\"callHeaders\":[{\"key\":\"x-ticket\",\"value\":\"42\"}]}}"#
        let request = try Self.parse(#"{"method": "customCallout", "customCallout": {"ice": "\#(ice)", "cli": "+46700000003"}}"#).get()
        #expect(request.destination == .sip("pbx@10.0.0.5"))
        #expect(request.headers == ["x-ticket": "42"])
        #expect(request.steps.isEmpty)
        #expect(request.ending == .continue)
        #expect(request.sendsACE)
    }

    @Test func connectPstnWithoutANumberCallsTheDestination() throws {
        let ice = #"{\"action\":{\"name\":\"connectPstn\"}}"#
        let request = try Self.parse(#"{"method": "customCallout", "customCallout": {"ice": "\#(ice)", "destination": {"type": "number", "endpoint": "+15550100"}}}"#).get()
        #expect(request.destination == .phone("+15550100"))
    }

    @Test func malformedRequestsAre400() {
        let cases: [(String, String)] = [
            ("[]", "JSON object"),
            (#"{"ttsCallout": {}}"#, "method"),
            (#"{"method": "ttsCallout"}"#, "ttsCallout"),
            (#"{"method": "ttsCallout", "ttsCallout": {"text": "hi"}}"#, "destination"),
            (#"{"method": "ttsCallout", "ttsCallout": {"destination": {"type": "number", "endpoint": "+15550100"}}}"#, "text"),
            (#"{"method": "ttsCallout", "ttsCallout": {"destination": {"type": "number", "endpoint": "call me"}, "text": "x"}}"#, "phone number"),
            (#"{"method": "ttsCallout", "ttsCallout": {"destination": {"type": "fax", "endpoint": "1"}, "text": "x"}}"#, "destination type"),
            (#"{"method": "ttsCallout", "ttsCallout": {"destination": {"type": "number", "endpoint": "+15550100"}, "text": "x", "cli": "nope"}}"#, "cli"),
            (#"{"method": "ttsCallout", "ttsCallout": {"destination": {"type": "number", "endpoint": "+15550100"}, "text": "x", "enableDice": "yes"}}"#, "enableDice"),
            (#"{"method": "ttsCallout", "ttsCallout": {"destination": {"type": "number", "endpoint": "+15550100"}, "text": "x", "dtmf": "12x"}}"#, "dtmf"),
            (##"{"method": "ttsCallout", "ttsCallout": {"destination": {"type": "number", "endpoint": "+15550100"}, "prompts": "#ssml[<speak>hi</speak>]"}}"##, "SSML"),
            (#"{"method": "ttsCallout", "ttsCallout": {"destination": {"type": "number", "endpoint": "+15550100"}, "text": "\#(String(repeating: "a", count: 601))"}}"#, "600"),
            (#"{"method": "customCallout", "customCallout": {}}"#, "ice"),
            (#"{"method": "customCallout", "customCallout": {"ice": "not json"}}"#, "ice"),
            (#"{"method": "customCallout", "customCallout": {"ice": "{\"action\":{\"name\":\"fly\"}}"}}"#, "ice"),
            (#"{"method": "customCallout", "customCallout": {"ice": "{\"action\":{\"name\":\"connectPstn\"}}"}}"#, "number"),
            (#"{"method": "customCallout", "customCallout": {"ice": "{\"action\":{\"name\":\"continue\"}}"}}"#, "ice"),
            (#"{"method": "customCallout", "customCallout": {"ice": "{\"action\":{\"name\":\"connectPstn\",\"number\":\"+15550100\"}}", "ace": "{\"action\":{\"name\":\"connectPstn\"}}"}}"#, "ace"),
            (#"{"method": "customCallout", "customCallout": {"ice": "{\"action\":{\"name\":\"connectPstn\",\"number\":\"+15550100\"}}", "maxDuration": 1.5}}"#, "maxDuration"),
            (#"{"method": "customCallout", "customCallout": {"ice": "{\"action\":{\"name\":\"connectSip\",\"destination\":{\"type\":\"sip\",\"endpoint\":\"a@b\"},\"callHeaders\":[{\"key\":\"Via\",\"value\":\"x\"}]}}"}}"#, "x-"),
            (#"{"method": "shoutCallout"}"#, "unknown callout method"),
        ]
        for (json, words) in cases {
            let refused = Self.refusal(json)
            #expect(refused?.status == 400 && refused?.code == 40000, "\(json): \(String(describing: refused))")
            #expect(refused?.message.localizedCaseInsensitiveContains(words) == true, "\(json): \(String(describing: refused))")
        }
    }

    @Test func whatIsNotBuiltIs501() {
        let cases: [(String, String)] = [
            (#"{"method": "ttsCallout", "ttsCallout": {"destination": {"type": "username", "endpoint": "bob"}, "text": "x"}}"#, "app user"),
            (#"{"method": "customCallout", "customCallout": {"ice": "{\"action\":{\"name\":\"connectMxp\",\"destination\":{\"type\":\"username\",\"endpoint\":\"bob\"}}}"}}"#, "connectMxp"),
            (##"{"method": "customCallout", "customCallout": {"ice": "{\"action\":{\"name\":\"connectPstn\",\"number\":\"+15550100\"}}", "ace": "{\"action\":{\"name\":\"runMenu\",\"menus\":[{\"id\":\"main\",\"mainPrompt\":\"#tts[hi]\",\"options\":[{\"dtmf\":\"1\",\"action\":\"return(a)\"}]}]}}"}}"##, "runMenu"),
            (#"{"method": "customCallout", "customCallout": {"ice": "{\"action\":{\"name\":\"connectPstn\",\"number\":\"+15550100\"}}", "pie": "{\"action\":{\"name\":\"hangup\"}}"}}"#, "pie"),
            (#"{"method": "customCallout", "customCallout": {"ice": "{\"instructions\":[{\"name\":\"startRecording\"}],\"action\":{\"name\":\"connectPstn\",\"number\":\"+15550100\"}}"}}"#, "startRecording"),
        ]
        for (json, words) in cases {
            let refused = Self.refusal(json)
            #expect(refused?.status == 501 && refused?.code == 50100, "\(json): \(String(describing: refused))")
            #expect(refused?.message.localizedCaseInsensitiveContains(words) == true, "\(json): \(String(describing: refused))")
        }
    }
}
