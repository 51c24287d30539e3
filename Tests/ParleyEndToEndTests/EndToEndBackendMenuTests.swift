import Foundation
import ParleyMediaCore
import Testing

extension EndToEndRealTimeMediaTests.SIPInteropBaresipTests {
    /// Waits until baresip's call ended by parleyd's BYE: baresip says `terminated
    /// (duration ...)`, or only `session closed` when the BYE comes right after the call
    /// was set up (its audio not started yet).
    static func waitForHangUp(of phone: BaresipPeer, timeout: Double) throws {
        try phone.process.waitForLine(timeout: timeout, "'terminated' or 'session closed'") {
            $0.contains("terminated (duration") || $0.contains("session closed")
        }
    }

    /// The share of 20 ms frames of a recording louder than -40 dBFS (speech or a prompt).
    static func voicedRatio(of path: String) throws -> (ratio: Double, seconds: Double) {
        let wav = try WAVFile.read(path: path)
        let frame = wav.sampleRate / 50
        guard frame > 0, wav.samples.count >= frame else { return (0, 0) }
        let levels = stride(from: 0, to: wav.samples.count - frame + 1, by: frame).map {
            FrequencyAnalysis.rmsDBFS(samples: Array(wav.samples[$0..<$0 + frame]))
        }
        let voiced = levels.filter { $0 > -40 }.count
        return (Double(voiced) / Double(levels.count), Double(voiced) / 50)
    }

    /// Where speech is in a recording, in seconds: the first and last voiced 20 ms frames
    /// (above -40 dBFS), the voiced share between them, and the recording's length.
    static func voicedSpan(of path: String) throws -> (first: Double, last: Double, ratio: Double, length: Double)? {
        let wav = try WAVFile.read(path: path)
        let frame = wav.sampleRate / 50
        guard frame > 0, wav.samples.count >= frame else { return nil }
        let voiced = stride(from: 0, to: wav.samples.count - frame + 1, by: frame).map {
            FrequencyAnalysis.rmsDBFS(samples: Array(wav.samples[$0..<$0 + frame])) > -40
        }
        guard let first = voiced.firstIndex(of: true), let last = voiced.lastIndex(of: true) else { return nil }
        let inside = voiced[first...last].filter { $0 }.count
        return (Double(first) / 50, Double(last + 1) / 50, Double(inside) / Double(last + 1 - first), Double(voiced.count) / 50)
    }

    /// A phone calls a number whose backend answers `say` then `hangup`: parleyd answers
    /// the call itself, speaks the text (espeak-ng), then sends BYE; the phone's recording
    /// holds speech; the DiCE says ANSWERED, MANAGERHANGUP.
    @Test func aBackendThatSaysSomethingThenHangsUpIsHeard() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let phone = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, backend) = try Self.backendGateway(phone: phone, number: "+46700000097") { key, secret in
            try TestBackend(directory: scratch, applicationKey: key, secret: secret, script: [
                "ice": [
                    "instructions": [["name": "say", "text": "Welcome to Parley. This call is answered by the server. Goodbye.", "locale": "en-US"]],
                    "action": ["name": "hangup"],
                ],
            ])
        }
        let sipPort = try Self.sipPort(of: server)
        try phone.command("dial", "sip:+46700000097@127.0.0.1:\(sipPort)")
        _ = try backend.waitFor("ice")
        try phone.waitForCall(timeout: 10)
        try phone.waitForCallEnd(timeout: 20)
        let heard = try phone.receivedRecording().path
        phone.stop()
        let dice = try backend.waitFor("dice")
        #expect(dice.body["result"] as? String == "ANSWERED" && dice.body["reason"] as? String == "MANAGERHANGUP", "\(dice.body)")
        let speech = try Self.voicedRatio(of: heard)
        #expect(speech.seconds >= 1.5, "speech heard: \(speech)")
    }

    /// A `runMenu` answered by the phone's DTMF (RFC 4733): the backend's PIE names the
    /// option's return value and echoes the cookie `setCookie` set; its answer (`say`,
    /// `hangup`) ends the call.
    @Test func aMenuAnsweredByDTMFReachesTheBackendAsAPIE() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let phone = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, backend) = try Self.backendGateway(phone: phone, number: "+46700000097") { key, secret in
            try TestBackend(directory: scratch, applicationKey: key, secret: secret, script: [
                "ice": [
                    "instructions": [["name": "setCookie", "key": "account", "value": "42"]],
                    "action": [
                        "name": "runMenu",
                        "menus": [[
                            "id": "main", "mainPrompt": "#tts[Press one for sales or two for support]", "timeoutMills": 8000,
                            "options": [["dtmf": "1", "action": "return(sales)"], ["dtmf": "2", "action": "return(support)"]],
                        ]],
                    ],
                ],
                "pie": ["instructions": [["name": "say", "text": "Thank you."]], "action": ["name": "hangup"]],
            ])
        }
        let sipPort = try Self.sipPort(of: server)
        try phone.command("dial", "sip:+46700000097@127.0.0.1:\(sipPort)")
        let ice = try backend.waitFor("ice")
        try phone.waitForCall(timeout: 10)
        Thread.sleep(forTimeInterval: 1.0)
        try phone.sendDTMF("2")
        let pie = try backend.waitFor("pie")
        #expect(pie.body["callid"] as? String == ice.body["callid"] as? String)
        let result = pie.body["menuResult"] as? [String: Any] ?? [:]
        #expect(result["type"] as? String == "return" && result["value"] as? String == "support" && result["menuId"] as? String == "main",
                "\(pie.body)")
        #expect((pie.body["custom"] as? String)?.contains("\"account\":\"42\"") == true, "\(pie.body)")
        try phone.waitForCallEnd(timeout: 20)
        phone.stop()
        let dice = try backend.waitFor("dice")
        #expect(dice.body["result"] as? String == "ANSWERED" && dice.body["reason"] as? String == "MANAGERHANGUP", "\(dice.body)")
    }

    /// `park` with a hold prompt and a `maxDuration`: the phone hears the prompt looped
    /// until the limit, then parleyd hangs up; the DiCE says TIMEOUT.
    @Test func aParkedCallHearsItsHoldPromptUntilItsMaxDuration() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let phone = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, backend) = try Self.backendGateway(phone: phone, number: "+46700000097") { key, secret in
            try TestBackend(directory: scratch, applicationKey: key, secret: secret, script: [
                "ice": ["action": ["name": "park", "introPrompt": "#tts[Please hold]", "holdPrompt": "#tts[You are parked]", "maxDuration": 5]],
            ])
        }
        let sipPort = try Self.sipPort(of: server)
        try phone.command("dial", "sip:+46700000097@127.0.0.1:\(sipPort)")
        _ = try backend.waitFor("ice")
        try phone.waitForCall(timeout: 10)
        try phone.waitForCallEnd(timeout: 20)
        let heard = try phone.receivedRecording().path
        phone.stop()
        let dice = try backend.waitFor("dice")
        #expect(dice.body["result"] as? String == "ANSWERED" && dice.body["reason"] as? String == "TIMEOUT", "\(dice.body)")
        #expect((dice.body["duration"] as? Int ?? 0) >= 4, "\(dice.body)")
        // The prompts are rendered (espeak-ng) after the answer, so on a busy machine speech
        // starts late; what `park` promises is the hold prompt looping until the limit: once
        // speech starts it goes on (speech and its pauses) to the BYE.
        let span = try #require(try Self.voicedSpan(of: heard), "no speech heard")
        #expect(span.first < 3, "speech started late: \(span)")
        #expect(span.length - span.last < 1.5, "speech stopped before the hang-up: \(span)")
        #expect(span.ratio >= 0.5, "speech heard: \(span)")
    }

    /// ACE: bob answers a call the backend routed with `connectMxp`; the backend gets a
    /// signed ACE and answers `hangup`: the call ends for both, the DiCE says MANAGERHANGUP.
    @Test func anACEAnsweredWithHangupEndsTheCall() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let phone = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, backend) = try Self.backendGateway(phone: phone, number: "+46700000097") { key, secret in
            try TestBackend(directory: scratch, applicationKey: key, secret: secret, script: [
                "ice": ["action": ["name": "connectMxp", "destination": ["type": "username", "endpoint": "bob"]]],
                "ace": ["action": ["name": "hangup"]],
            ])
        }
        let sipPort = try Self.sipPort(of: server)
        let bob = try SoftphoneProcess.listen("listen bob", on: server, as: "bob", ["--answer", "--tone", "440", "--duration", "20"])
        try phone.command("dial", "sip:+46700000097@127.0.0.1:\(sipPort)")
        let ice = try backend.waitFor("ice")
        _ = try bob.waitForEvent("incoming", timeout: 20)
        let ace = try backend.waitFor("ace")
        #expect(ace.body["callid"] as? String == ice.body["callid"] as? String, "\(ace.body)")
        #expect(ace.body["applicationKey"] as? String == server.applicationKey)
        try Self.waitForHangUp(of: phone, timeout: 15)
        _ = try bob.waitForEvent("ended", timeout: 15)
        phone.stop()
        let dice = try backend.waitFor("dice")
        #expect(dice.body["result"] as? String == "ANSWERED" && dice.body["reason"] as? String == "MANAGERHANGUP", "\(dice.body)")
    }

    /// A PIE answered with garbage: parleyd hangs up (BYE) and the DiCE says CALLBACKERROR.
    @Test func aPIEAnsweredWithGarbageEndsTheCall() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let phone = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, backend) = try Self.backendGateway(phone: phone, number: "+46700000097") { key, secret in
            try TestBackend(directory: scratch, applicationKey: key, secret: secret, script: [
                "ice": ["action": ["name": "runMenu", "menus": [["id": "main", "mainPrompt": "#tts[Enter a digit]", "timeoutMills": 8000]]]],
                "pie": "not json",
            ])
        }
        let sipPort = try Self.sipPort(of: server)
        try phone.command("dial", "sip:+46700000097@127.0.0.1:\(sipPort)")
        try phone.waitForCall(timeout: 10)
        Thread.sleep(forTimeInterval: 0.5)
        try phone.sendDTMF("7")
        let pie = try backend.waitFor("pie")
        let result = pie.body["menuResult"] as? [String: Any] ?? [:]
        #expect(result["type"] as? String == "sequence" && result["value"] as? String == "7", "\(pie.body)")
        try Self.waitForHangUp(of: phone, timeout: 15)
        phone.stop()
        let dice = try backend.waitFor("dice")
        #expect(dice.body["result"] as? String == "ANSWERED" && dice.body["reason"] as? String == "CALLBACKERROR", "\(dice.body)")
    }

    /// `say` then `connectMxp`: parleyd answers, the phone hears the text, then bob rings
    /// on the same dialog and media; bob answers, the tones cross both ways, bob hangs up;
    /// the DiCE says ANSWERED, CALLEEHANGUP.
    @Test func aPromptThenConnectMxpRingsTheUserOnTheAnsweredCall() throws {
        let scratch = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let recording = scratch.appendingPathComponent("bob-hears.wav").path
        let phone = try BaresipPeer(user: "+4615550101", tone: 1000)
        let (server, backend) = try Self.backendGateway(phone: phone, number: "+46700000097") { key, secret in
            try TestBackend(directory: scratch, applicationKey: key, secret: secret, script: [
                "ice": [
                    "instructions": [["name": "setCookie", "key": "queue", "value": "sales"], ["name": "say", "text": "Connecting you now."]],
                    "action": ["name": "connectMxp", "destination": ["type": "username", "endpoint": "bob"]],
                ],
                "ace": ["action": ["name": "continue"]],
            ])
        }
        let sipPort = try Self.sipPort(of: server)
        let bob = try SoftphoneProcess.listen("listen bob", on: server, as: "bob",
                                              ["--answer", "--tone", "440", "--record", recording, "--duration", "4"])
        try phone.command("dial", "sip:+46700000097@127.0.0.1:\(sipPort)")
        let ice = try backend.waitFor("ice")
        try phone.waitForCall(timeout: 10)
        let incoming = try bob.waitForEvent("incoming", timeout: 20)
        #expect(incoming["callId"] as? String == ice.body["callid"] as? String, "\(incoming)")
        #expect(try bob.waitForExit(timeout: 30) == 0, "\(bob.report)")
        try phone.waitForCallEnd(timeout: 10)
        let phoneHeard = try phone.receivedRecording().path
        phone.stop()
        let ace = try backend.waitFor("ace")
        #expect(ace.body["custom"] as? String == #"{"queue":"sales"}"#, "the cookie goes on: \(ace.body)")
        let dice = try backend.waitFor("dice")
        #expect(dice.body["result"] as? String == "ANSWERED" && dice.body["reason"] as? String == "CALLEEHANGUP", "\(dice.body)")
        #expect(dice.body["custom"] as? String == #"{"queue":"sales"}"#, "\(dice.body)")
        try Self.expectTone(1000, in: recording, minimumRatio: 0.75)
        try Self.expectTone(440, in: phoneHeard, minimumRatio: 0.5)
        #expect(try Self.voicedRatio(of: phoneHeard).seconds >= 4, "the prompt, then bob's tone")
    }
}
