import Foundation
import ParleyAuth
import ParleyCallCore
import ParleyCallModel
import ParleyCrypto
import ParleyMediaCore
import ParleyNetCore
@testable import ParleyServer
import ParleyStore
import ParleyTestSupport
import ParleyVoiceAPI
import ParleyWireCore
import Synchronization
import Testing

/// Calls the server answers itself (`ServerAnsweredCalls`) through a real media anchor on a
/// `ManualScheduler` with sockets in memory, toward a SIP caller built as
/// `MediaAnchorGatewayTests.SIPPeer`; the SIP user agent is a fake that records what the
/// engine tells the caller. Prompts are WAV files of a scratch prompt directory; records go
/// to a SQLite store in the same directory.
@Suite struct ServerAnsweredCallsTests {
    typealias SIPPeer = MediaAnchorGatewayTests.SIPPeer

    /// Records what the controller tells the SIP caller.
    final class FakeSIP: SIPCallPort, @unchecked Sendable {
        let told = Mutex<[CallNotification]>([])
        func attach(_ report: @escaping @Sendable (SIPCallEvent, SIPParty) -> Void) {}
        func tell(_ party: SIPParty, _ notification: CallNotification) { told.withLock { $0.append(notification) } }
        func attachInbound(_ offered: @escaping @Sendable (InboundSIPCall) -> Void) {}
        var all: [CallNotification] { told.withLock { $0 } }
        var ended: Bool { all.contains { if case .ended = $0 { true } else { false } } }
    }

    final class Harness {
        let scheduler = ManualScheduler()
        let network = MemoryMediaNetwork()
        let anchor: MediaAnchor
        let sip = FakeSIP()
        let peer: SIPPeer
        let calls: ServerAnsweredCalls
        let callID = "ivr-call-1"
        let party: SIPParty
        let directory: URL
        let store: StoreQueue
        let recorder: CallRecorder
        let applicationKey: String

        init() throws {
            directory = URL(fileURLWithPath: ServerHarness.temporaryDirectory())
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let stores = try CallStoreFactory.sqlite(dataDirectory: directory.path)
            store = try StoreQueue(opening: stores)
            let credentials = try ApplicationCredentials.generate()
            applicationKey = credentials.key
            _ = try store.performAndWait { (store) throws(StoreError) in
                try store.createApplication(key: credentials.key, name: "ivr", secret: credentials.secret.base64, at: 1_800_000_000_000)
            }
            recorder = try CallRecorder(stores: stores, log: ServerLog(level: .error) { _ in }, metrics: ServerMetrics())
            let configuration = ServerHarness.configuration(directory: directory.path) { $0.mediaInactivityTimeout = .seconds(30) }
            let box = Mutex<ServerAnsweredCalls?>(nil)
            anchor = MediaAnchor(
                loop: scheduler, mediaLoops: [ManualMediaLoop(scheduler)], stopMediaLoops: {}, ports: MemoryMediaPorts(network: network),
                configuration: configuration, certificate: try DTLSCertificate.generate(), log: ServerLog(level: .error) { _ in },
                metrics: ServerMetrics(), wallClockNanoseconds: { 1_800_000_000_000_000_000 },
                report: { event, callID in box.withLock { $0 }?.mediaReported(event, callID: callID) })
            let created = ServerAnsweredCalls(
                loop: scheduler, anchor: anchor, sipCalls: sip, backend: nil, prompts: PromptLibrary(directory: directory.path),
                log: ServerLog(level: .error) { _ in }, maximumCallLength: .seconds(3600), recorder: recorder,
                wallClock: { 1_800_000_000_000 })
            calls = created
            box.withLock { $0 = created }
            peer = SIPPeer(port: 7_000, frequency: 1_000, network: network, now: scheduler.now, seed: 2)
            party = SIPParty(callID: callID, destination: .phone(PhoneRoute(number: "+4615550101")))
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        /// A WAV file of a tone in the prompt directory.
        func tone(_ name: String, frequency: Double, milliseconds: Int, rate: Int = 8000) throws {
            var generator = ToneGenerator(frequency: frequency, amplitude: 0.4, sampleRate: rate)
            try WAVFile(sampleRate: rate, samples: generator.next(count: rate * milliseconds / 1000))
                .write(path: directory.appendingPathComponent(name + ".wav").path)
        }

        /// The caller's INVITE offer, answered by the server with `svaml`.
        func call(_ svaml: SVAMLResponse) throws {
            let inbound = InboundSIPCall(party: party, dialled: "+46700000097", applicationKey: applicationKey, target: nil,
                                         offer: try peer.core.makeOffer(), headers: [:], sipCallID: "invite-1@trunk.test")
            let context = CallEngine.BackendCall(applicationKey: applicationKey, from: "+4615550101",
                                                 to: Destination(kind: .did, endpoint: "+46700000097"), headers: [])
            calls.take(inbound, context: context, svaml: svaml)
            scheduler.run()
            let answer = try #require(sip.all.compactMap { if case .mediaReady(_, let sdp) = $0 { sdp } else { nil } }.first)
            try peer.core.acceptAnswer(answer)
            peer.carry(try peer.core.start(now: scheduler.now))
        }

        /// Virtual time in 1 ms steps, audio every 20 ms; prompts load on a real queue, so
        /// each step also gives it a moment when the controller waits for one.
        func run(milliseconds: Int, until done: () -> Bool = { false }) {
            for step in 1...milliseconds {
                scheduler.advance(by: .milliseconds(1))
                peer.step(now: scheduler.now)
                if step % 20 == 0 { peer.audio(now: scheduler.now) }
                scheduler.run()
                if step % 100 == 0 { Thread.sleep(forTimeInterval: 0.002) }
                if done() { return }
            }
        }

        /// Gives the prompt library (real time, 1 s) to hand its clips back; one that comes
        /// later is still taken by `run`, a step at a time.
        func settle() {
            for _ in 0..<100 {
                Thread.sleep(forTimeInterval: 0.01)
                scheduler.run()
            }
        }

        /// The call's record and timeline once every write handed to the recorder is done.
        func stored() throws -> (call: StoredCall?, events: [CallEvent]) {
            #expect(recorder.flush())
            return try store.performAndWait { [callID] (store) throws(StoreError) in
                (try store.call(id: callID, applicationKey: nil), try store.callEvents(callId: callID, applicationKey: nil))
            }
        }

        var heardDominant: Double {
            FrequencyAnalysis.dominantFrequency(samples: Array(peer.received.suffix(48_000)), sampleRate: 48_000) ?? 0
        }
    }

    @Test func aFilePlaysThenTheCallIsHungUp() throws {
        let h = try Harness()
        defer { h.anchor.closeEverything() }
        try h.tone("beep", frequency: 600, milliseconds: 1500)
        try h.call(SVAMLResponse(instructions: [.playFiles(ids: ["beep"], locale: nil)], action: .hangup))
        #expect(h.sip.all.contains(.answered(callID: h.callID, time: 1_800_000_000_000)))
        h.run(milliseconds: 200)
        h.settle()
        h.run(milliseconds: 1000)
        #expect(!h.sip.ended, "hung up before the prompt was heard: \(h.sip.all)")
        #expect(abs(h.heardDominant - 600) < 15, "heard \(h.heardDominant) Hz")
        h.run(milliseconds: 1500) { h.sip.ended }
        let ended = h.sip.all.last
        guard case .ended(_, let cause, _, _)? = ended else { Issue.record("not ended: \(h.sip.all)"); return }
        #expect(cause == .hungUp)
        #expect(!h.calls.handles(h.callID))
    }

    @Test func sendDtmfReachesTheCallerAsRFC4733BeforeTheHangUp() throws {
        let h = try Harness()
        defer { h.anchor.closeEverything() }
        try h.call(SVAMLResponse(instructions: [.sendDtmf("1w#")], action: .hangup))
        h.run(milliseconds: 2000) { h.sip.ended }
        let keys = h.peer.reportedEvents.filter(\.isEnd).compactMap(\.key)
        #expect(keys == ["1", "#"], "\(h.peer.reportedEvents)")
        #expect(h.sip.ended)
    }

    @Test func aParkedCallLoopsItsHoldPromptUntilHungUpByTheEngine() throws {
        let h = try Harness()
        defer { h.anchor.closeEverything() }
        try h.tone("hold", frequency: 800, milliseconds: 300)
        try h.call(SVAMLResponse(action: .park(ParkAction(holdPrompt: "hold"))))
        h.run(milliseconds: 200)
        h.settle()
        h.run(milliseconds: 3000)
        #expect(!h.sip.ended)
        #expect(abs(h.heardDominant - 800) < 15, "heard \(h.heardDominant) Hz")
        #expect(h.calls.hangUp(callID: h.callID))
        #expect(h.sip.ended)
        #expect(!h.calls.hangUp(callID: h.callID), "a second hang-up finds no call")
        #expect(!h.calls.update(callID: h.callID, svaml: SVAMLResponse(action: .continue)))
    }

    @Test func anUpdateReplacesWhatPlays() throws {
        let h = try Harness()
        defer { h.anchor.closeEverything() }
        try h.tone("hold", frequency: 800, milliseconds: 300)
        try h.tone("bye", frequency: 500, milliseconds: 800)
        try h.call(SVAMLResponse(action: .park(ParkAction(holdPrompt: "hold"))))
        h.run(milliseconds: 200)
        h.settle()
        h.run(milliseconds: 1000)
        #expect(h.calls.update(callID: h.callID, svaml: SVAMLResponse(instructions: [.playFiles(ids: ["bye"], locale: nil)], action: .hangup)))
        h.settle()
        h.run(milliseconds: 700)
        #expect(!h.sip.ended)
        #expect(abs(h.heardDominant - 500) < 15, "heard \(h.heardDominant) Hz")
        h.run(milliseconds: 1500) { h.sip.ended }
        #expect(h.sip.ended)
    }

    @Test func aMenuKeyEndsTheMenuAndWithoutABackendTheCallEnds() throws {
        let h = try Harness()
        defer { h.anchor.closeEverything() }
        try h.tone("menu", frequency: 700, milliseconds: 400)
        let menu = try RunMenuAction(menus: [Menu(id: "main", mainPrompt: "menu", timeoutMilliseconds: 60_000,
                                                   options: [MenuOption(dtmf: "1", action: .return("one"))])])
        try h.call(SVAMLResponse(action: .runMenu(menu)))
        h.run(milliseconds: 200)
        h.settle()
        h.run(milliseconds: 1000)
        #expect(!h.sip.ended)
        _ = h.peer.events.enqueueDigits([1])
        h.run(milliseconds: 2000) { h.sip.ended }
        // The menu ended on the key; the PIE has no backend to go to: CALLBACKERROR, BYE.
        #expect(h.sip.ended, "\(h.sip.all)")
    }

    @Test func aSIPInfoKeyEndsTheMenuAndACallerHangUpEndsQuietly() throws {
        let menu = try RunMenuAction(menus: [Menu(id: "main", mainPrompt: "menu", maxDigits: 1, timeoutMilliseconds: 60_000)])
        for hangUp in [false, true] {
            let h = try Harness()
            defer { h.anchor.closeEverything() }
            try h.tone("menu", frequency: 700, milliseconds: 200)
            try h.call(SVAMLResponse(action: .runMenu(menu)))
            h.run(milliseconds: 100)
            h.settle()
            h.run(milliseconds: 500)
            #expect(h.calls.handles(h.callID))
            if hangUp {
                h.calls.sipReported(.hungUp, callID: h.callID)
                // The caller ended it: nothing more is told to its dialog.
                #expect(!h.sip.ended)
            } else {
                h.calls.sipReported(.dtmf(digits: "5"), callID: h.callID)
                // A sequence result; its PIE has no backend: the call ends (BYE).
                #expect(h.sip.ended)
            }
            #expect(!h.calls.handles(h.callID))
        }
    }

    /// The record of a call answered here: created at the answer, answered and
    /// established, ended with the cause of the DiCE's reason; its timeline keeps the
    /// DiCE's outcome, which `GET /calling/v1/calls/id/{callId}` reads.
    @Test func aCallAnsweredHereIsRecordedFromItsAnswerToItsEnd() throws {
        let h = try Harness()
        defer { h.anchor.closeEverything() }
        try h.call(SVAMLResponse(action: .park(ParkAction())))
        h.run(milliseconds: 200)
        let live = try h.stored()
        let call = try #require(live.call)
        #expect(call.caller == .phone("+4615550101") && call.callee == .phone("+46700000097") && call.direction == .phoneToPhone)
        #expect(call.state == .established && call.details.answeredTime == 1_800_000_000_000, "\(call)")
        #expect(call.sipCallId == "invite-1@trunk.test" && call.sipStatus == 200, "\(call)")
        let information = SinchCallInformation(record: call, hungUpBy: nil, nowMilliseconds: 1_800_000_005_000)
        #expect(information.status == "ONGOING" && information.duration == 5 && information.result == "N/A")

        #expect(h.calls.hangUp(callID: h.callID))
        h.scheduler.run()
        let ended = try h.stored()
        let final = try #require(ended.call)
        #expect(final.state == .ended && final.endCause == .hungUp && final.details.endedTime == 1_800_000_000_000, "\(final)")
        #expect(final.legs.map(\.role) == [.caller], "the caller's leg and its figures: \(final.legs)")
        let outcome = try #require(ended.events.last { $0.kind == CallRecorder.outcomeEventKind })
        #expect(outcome.detail == ["result": "ANSWERED", "reason": "MANAGERHANGUP"])
        let recorded = SinchCallOutcome(recorded: outcome.detail)
        #expect(SinchCallInformation(record: final, hungUpBy: nil, recorded: recorded, nowMilliseconds: 0).reason == "MANAGERHANGUP")
    }

    /// `connectPstn` after a prompt hands the call to the engine with its context (the
    /// answer's time, its record), and nothing of it stays here; a refusal the engine
    /// answers ends the record with that error.
    @Test func connectPstnAfterAPromptHandsTheCallOnAndARefusalEndsItsRecord() throws {
        for refused in [false, true] {
            let h = try Harness()
            defer { h.anchor.closeEverything() }
            let handed = Mutex<[(String, CallEngine.BackendCall, SVAMLAction)]>([])
            h.calls.connect = { inbound, context, action in
                handed.withLock { $0.append((inbound.party.callID, context, action)) }
                return refused ? CallError(code: "destination_not_allowed", message: "not an allowed prefix") : nil
            }
            try h.tone("beep", frequency: 600, milliseconds: 300)
            let connect = SVAMLAction.connectPstn(ConnectPstnAction(number: try PhoneNumber(normalizing: "+4631555010")))
            let svaml = SVAMLResponse(instructions: [.playFiles(ids: ["beep"], locale: nil)], action: connect)
            #expect(ServerAnsweredCalls.answers(svaml), "a prompt before connectPstn is answered here")
            try h.call(svaml)
            h.run(milliseconds: 200)
            h.settle()
            #expect(handed.withLock { $0.isEmpty }, "connected before the prompt played")
            h.run(milliseconds: 1000) { handed.withLock { !$0.isEmpty } }
            let (callID, context, action) = try #require(handed.withLock { $0.first })
            #expect(callID == h.callID && action == connect)
            #expect(context.serverAnsweredTime == 1_800_000_000_000 && context.recorded)
            #expect(!h.calls.handles(h.callID))
            #expect(!h.sip.ended, "the caller's dialog is the engine's now")
            h.scheduler.run()
            let call = try #require(try h.stored().call)
            if refused {
                #expect(call.state == .ended && call.endCause == .error && call.error?.code == "destination_not_allowed", "\(call)")
            } else {
                #expect(call.state == .established, "the engine's versions go on from here: \(call)")
            }
        }
    }

    /// The engine's versions of a call handed on from here ring and answer again: the
    /// recorder writes no state before one it wrote, so the record stays established and
    /// keeps the server's answer; the end is written as any call's.
    @Test func theRecorderWritesNoStateBeforeOneItWrote() throws {
        let h = try Harness()
        defer { h.anchor.closeEverything() }
        var record = ServerAnsweredCalls.record(of: InboundSIPCall(
            party: h.party, dialled: "+46700000097", applicationKey: h.applicationKey, target: nil, offer: "", headers: [:]),
            startedTime: 1_000)
        record.state = .established
        record.times.answeredTime = 2_000
        record.times.establishedTime = 2_100
        h.recorder.persist(record, legs: [])
        var engines = record
        engines.state = .ringing
        engines.times = CallTimes(startedTime: 5_000, progressedTime: 5_010, rungTime: 5_020)
        h.recorder.persist(engines, legs: [])
        #expect(try h.stored().call?.state == .established)
        engines.state = .established
        engines.times.answeredTime = 9_000
        engines.times.establishedTime = 9_100
        h.recorder.persist(engines, legs: [])
        engines.state = .ended
        engines.endCause = .denied
        engines.times.endedTime = 12_000
        h.recorder.persist(engines, legs: [])
        let call = try #require(try h.stored().call)
        #expect(call.state == .ended && call.endCause == .denied && call.details.startedTime == 1_000)
        #expect(call.details.answeredTime == 2_000 && call.details.rungTime == nil && call.durationMs == 10_000, "\(call)")
    }

    @Test func promptPartsAndNamesStayInsideTheDirectory() throws {
        #expect(try PromptLibrary.parts(ofPrompt: "#tts[Hello]; welcome ;#TTS[Bye]", locale: "en-US")
                == [.text("Hello", locale: "en-US"), .file("welcome"), .text("Bye", locale: "en-US")])
        #expect(throws: PromptLibrary.Failure.self) { try PromptLibrary.parts(ofPrompt: "#href[https://x.test/a.wav]", locale: nil) }
        #expect(throws: PromptLibrary.Failure.self) { try PromptLibrary.parts(ofPrompt: "#ssml[<speak/>]", locale: nil) }
        let h = try Harness()
        defer { h.anchor.closeEverything() }
        try h.tone("ok", frequency: 440, milliseconds: 100)
        let library = PromptLibrary(directory: h.directory.path)
        if case .failure = library.file("ok") { Issue.record("ok.wav not found") }
        for bad in ["../ok", "/etc/passwd", "missing", ""] {
            if case .success = library.file(bad) { Issue.record("\(bad) was read") }
        }
        if case .success = PromptLibrary(directory: nil).file("ok") { Issue.record("read without a directory") }
        #expect(PromptLibrary.voice(of: "en-US") == "en-us" && PromptLibrary.voice(of: "sv-SE") == "sv")
        #expect(PromptLibrary.voice(of: "en; rm -rf") == nil)
    }

    @Test func espeakSpeaksAndItsStreamedHeaderIsRepaired() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/espeak-ng") else { return }
        let spoken = PromptLibrary(directory: nil).synthesize("Hello from Parley", locale: "en-US")
        guard case .success(let clip) = spoken else { Issue.record("\(spoken)"); return }
        #expect(clip.sampleRate == 22_050)
        #expect(clip.duration > .milliseconds(500) && clip.duration < .seconds(5), "\(clip.duration)")
        #expect(FrequencyAnalysis.rmsDBFS(samples: clip.samples) > -40)
        // A locale espeak-ng has no voice for is spoken in its default voice.
        guard case .success(let fallback) = PromptLibrary(directory: nil).synthesize("Hello", locale: "zz-ZZ") else {
            Issue.record("no speech for an unknown locale"); return
        }
        #expect(fallback.duration > .milliseconds(200))
    }
}
