import Foundation
import Testing

extension EndToEndRealTimeMediaTests {
    /// parleyd's SIP gateway against SIPp playing the far side of what carriers and PBXs do
    /// (docs/sip.md, "Interop tests"): early media, hold and resume, a BYE from the far
    /// side, a digest challenge, retransmitted 2xx, an INVITE too big for UDP, and nobody
    /// answering. Each scenario (scripts/sipp/, README.md there) checks with its `ereg`s
    /// what parleyd sends, and fails the call (SIPp's exit status) on anything unexpected;
    /// the `parley` softphone's events say what the app saw.
    @Suite(.serialized) struct SIPInteropSIPpTests {
        /// A parleyd whose gateway sends `pbx.test` and the trunk to `peer`, its application
        /// allowed SIP addresses and `+46` numbers with the default CLI `+46700000001`.
        static func gateway(to peer: SIPpPeer, _ flags: [String] = []) throws -> ParleydInstance {
            let server = try ParleydInstance(flags: ["--sip-listen", "127.0.0.1:0", "--sip-route", "pbx.test=\(peer.address)",
                                                     "--sip-trunk", "sip:\(peer.address);transport=udp"] + flags)
            try server.admin(["set-dialling", server.applicationKey, "--sip", "on", "--allow-prefix", "+46"])
            try server.admin(["set-cli", server.applicationKey, "+46700000001"])
            return server
        }

        static func scratchDirectory() throws -> URL {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-e2e-interop-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return directory
        }

        /// parleyd's log lines with this event name.
        static func logLines(_ server: ParleydInstance, _ event: String) -> [Substring] {
            (server.process?.report ?? "").split(separator: "\n").filter { $0.contains(" \(event) ") }
        }

        /// The far side answers 183 with SDP and plays a 1.5 s ringback tone of 1000 Hz, and
        /// answers 200 only 2.5 s later (scripts/sipp/uas-early-media.xml): the caller hears
        /// the tone before its `answered`, through the gateway (PCMU to Opus).
        @Test func earlyMediaReachesTheCallerBeforeTheAnswer() throws {
            let scratch = try Self.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: scratch) }
            let recording = scratch.appendingPathComponent("caller-hears.wav").path
            let peer = try SIPpPeer(scenario: "uas-early-media",
                                    workingDirectory: EndToEndSIPTests.repository.appendingPathComponent("scripts/sipp"))
            let server = try Self.gateway(to: peer)
            let alice = try SoftphoneProcess.call("bob@pbx.test", on: server, as: "alice", ["--duration", "1", "--record", recording])
            #expect(try alice.waitForExit(timeout: 45) == 0, "\(alice.report)")
            #expect(try peer.waitForExit(timeout: 20) == 0, "\(peer.report)")
            #expect(alice.eventNames.containsInOrder(["ringing", "answered", "established", "ended"]), "\(alice.eventNames)")

            let answered = try #require(try alice.waitForEvent("answered", timeout: 1)["timeMs"] as? Double)
            let summary = try alice.summary(timeout: 1)
            let playoutStart = try #require(summary["audioPlayoutStartedMs"] as? Double, "no audio played: \(summary)")
            let timeline = try ToneTimeline(path: recording, frequency: 1000)
            let first = try #require(timeline.firstFrame, "the ringback never reached the caller")
            let answerFrame = Int((answered - playoutStart) / ToneTimeline.frameMilliseconds)
            #expect(first < answerFrame, "the tone began at frame \(first), the answer came at frame \(answerFrame)")
            // 1.5 s were played; jitter buffers and a loaded machine may cost a little.
            let early = timeline.seconds(in: 0..<answerFrame)
            #expect(early >= 1.2, "\(early) s of ringback before the answer")
        }

        /// The far side, running PCMA, puts the call on hold (re-INVITE `sendonly`) and
        /// resumes it (`sendrecv`), each time offering PCMU and PCMA;
        /// scripts/sipp/uas-hold-resume.xml checks that parleyd answers `recvonly`, then
        /// `sendrecv`, naming PCMA first and no `rtcp-mux`. The call goes on: the caller's
        /// tone, echoed by SIPp, is heard to the end, and the caller hangs up normally. The
        /// app is told of the hold and of the resume.
        @Test func holdAndResumeFromTheFarSideAreAnsweredRecvonlyThenSendrecv() throws {
            let scratch = try Self.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: scratch) }
            let recording = scratch.appendingPathComponent("caller-hears.wav").path
            let peer = try SIPpPeer(scenario: "uas-hold-resume", echo: true)
            let server = try Self.gateway(to: peer)
            let alice = try SoftphoneProcess.call("bob@pbx.test", on: server, as: "alice",
                                                  ["--duration", "3.5", "--tone", "440", "--record", recording])
            #expect(try alice.waitForExit(timeout: 45) == 0, "\(alice.report)")
            #expect(try peer.waitForExit(timeout: 20) == 0, "\(peer.report)")
            #expect(try alice.waitForEvent("ended", timeout: 1)["cause"] as? String == "hungUp")
            #expect(Self.logLines(server, "sip.reoffer.answered").count == 2, "\(server.process?.report ?? "")")
            // The app hears of both (`call.held`, `callDidChangeHold`).
            #expect(alice.eventNames.containsInOrder(["established", "remoteHeld", "remoteResumed", "ended"]), "\(alice.eventNames)")

            let analysis = try ToneTimeline(path: recording, frequency: 440)
            let dominant = try #require(analysis.dominantFrequency, "\(recording) is silent")
            #expect(abs(dominant - 440) < 15, "dominant \(dominant) Hz")
            #expect(analysis.arrivalRatio >= 0.8, "tone in \(analysis.arrivalRatio * 100) % of frames")
        }

        /// The app holds the call and resumes it (the softphone's `hold` and `resume`
        /// lines, `ParleyCall.setHeld`): parleyd sends the far side a re-INVITE offering
        /// `a=sendonly`, then one offering `a=sendrecv`, both with the running PCMU first
        /// (scripts/sipp/uas-app-hold.xml checks each, and answers `recvonly`, then
        /// `sendrecv`). While held the gateway sends silence both ways: the caller's tone,
        /// echoed by SIPp, stops coming back, and is heard again after the resume.
        @Test func holdAndResumeFromTheAppAreReINVITEsSendonlyThenSendrecv() throws {
            let scratch = try Self.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: scratch) }
            let recording = scratch.appendingPathComponent("caller-hears.wav").path
            let peer = try SIPpPeer(scenario: "uas-app-hold", echo: true)
            let server = try Self.gateway(to: peer)
            // Hung up 7 s after the answer: 1.5 s of talk, a 2 s hold, then talk again.
            let alice = try SoftphoneProcess.call("bob@pbx.test", on: server, as: "alice",
                                                  ["--duration", "7", "--tone", "440", "--record", recording])
            try alice.waitForEvent("established", timeout: 20)
            // The scenario's timing, not waits for something: talk, then hold for 2 s.
            Thread.sleep(forTimeInterval: 1.5)
            alice.process.write("hold\n")
            let held = try #require(try alice.waitForEvent("held", timeout: 10)["timeMs"] as? Double)
            Thread.sleep(forTimeInterval: 2)
            alice.process.write("resume\n")
            let resumed = try #require(try alice.waitForEvent("resumed", timeout: 10)["timeMs"] as? Double)
            #expect(try alice.waitForExit(timeout: 30) == 0, "\(alice.report)")
            #expect(try peer.waitForExit(timeout: 20) == 0, "\(peer.report)")
            #expect(try alice.waitForEvent("ended", timeout: 1)["cause"] as? String == "hungUp")
            #expect(Self.logLines(server, "sip.reinvite").count == 2, "\(server.process?.report ?? "")")
            #expect(Self.logLines(server, "sip.reinvite.answered").count == 2, "\(server.process?.report ?? "")")
            #expect(Self.logLines(server, "media.hold").count == 2, "\(server.process?.report ?? "")")

            let summary = try alice.summary(timeout: 1)
            let playoutStart = try #require(summary["audioPlayoutStartedMs"] as? Double, "no audio played: \(summary)")
            let timeline = try ToneTimeline(path: recording, frequency: 440)
            let frame = { (time: Double) in Int((time - playoutStart) / ToneTimeline.frameMilliseconds) }
            // Half a second after each change for the jitter buffers and the echo's round trip.
            let before = timeline.seconds(in: max(0, frame(held) - 40)..<frame(held))
            let during = timeline.seconds(in: frame(held) + 25..<frame(resumed))
            let after = timeline.seconds(in: frame(resumed) + 25..<frame(resumed) + 100)
            #expect(before >= 0.6, "\(before) s of tone in the 0.8 s before the hold")
            #expect(during <= 0.1, "\(during) s of tone while held")
            #expect(after >= 1.1, "\(after) s of tone in the 1.5 s after the resume")
        }

        /// The far side hangs up (scripts/sipp/uas-bye.xml: its BYE 1.5 s after the answer,
        /// which parleyd must answer 200): the caller, who set no duration, sees its call
        /// end `hungUp`.
        @Test func aBYEFromTheFarSideEndsTheCallHungUp() throws {
            let peer = try SIPpPeer(scenario: "uas-bye")
            let server = try Self.gateway(to: peer)
            let alice = try SoftphoneProcess.call("bob@pbx.test", on: server, as: "alice")
            #expect(try alice.waitForExit(timeout: 30) == 0, "\(alice.report)")
            #expect(try peer.waitForExit(timeout: 20) == 0, "\(peer.report)")
            let ended = try alice.waitForEvent("ended", timeout: 1)
            #expect(ended["cause"] as? String == "hungUp", "\(ended)")
            #expect(alice.eventNames.contains("hangingUp") == false, "the caller hung up itself: \(alice.eventNames)")
            #expect(try alice.summary(timeout: 1)["established"] as? Bool == true)
        }

        /// The trunk answers the INVITE 401 with an MD5 qop=auth challenge
        /// (scripts/sipp/uas-auth.xml); parleyd answers it with `--sip-trunk-user` and
        /// `--sip-trunk-password`, which SIPp's `verifyauth` checks, and the call goes on.
        @Test func theTrunksDigestChallengeIsAnsweredWithItsAccount() throws {
            let peer = try SIPpPeer(scenario: "uas-auth")
            let server = try Self.gateway(to: peer, ["--sip-trunk-user", "parley", "--sip-trunk-password", "s3cret"])
            let alice = try SoftphoneProcess.call("+4615550101", on: server, as: "alice", ["--duration", "1"])
            #expect(try alice.waitForExit(timeout: 45) == 0, "\(alice.report)")
            #expect(try peer.waitForExit(timeout: 20) == 0, "\(peer.report)")
            #expect(try alice.waitForEvent("ended", timeout: 1)["cause"] as? String == "hungUp")
        }

        /// The same trunk with the wrong password: SIPp's check fails, it answers 403, and
        /// the caller's call ends with that status (and the check is shown to bite).
        @Test func aWrongTrunkPasswordEndsTheCallWithTheTrunksRefusal() throws {
            let peer = try SIPpPeer(scenario: "uas-auth")
            let server = try Self.gateway(to: peer, ["--sip-trunk-user", "parley", "--sip-trunk-password", "not-the-secret"])
            let alice = try SoftphoneProcess.call("+4615550101", on: server, as: "alice", ["--duration", "1"])
            #expect(try alice.waitForExit(timeout: 45) == 3, "\(alice.report)")
            let ended = try alice.waitForEvent("ended", timeout: 1)
            #expect(ended["errorMessage"] as? String == "SIP 403 Wrong Credentials", "\(ended)")
            #expect(try peer.waitForExit(timeout: 20) != 0, "\(peer.report)")
        }

        /// A carrier retransmits its 200 twice after parleyd's ACK
        /// (scripts/sipp/uas-2xx-retransmit.xml): each retransmission is acknowledged again
        /// (RFC 3261 §13.2.2.4), the app hears of one answer only, and the call stays up
        /// until the caller hangs up.
        @Test func retransmittedTwoHundredsAreEachAcknowledgedAndTheCallStaysUp() throws {
            // -nr: SIPp would take the second ACK, identical to the first, for a retransmission.
            let peer = try SIPpPeer(scenario: "uas-2xx-retransmit", extra: ["-nr"])
            let server = try Self.gateway(to: peer)
            let alice = try SoftphoneProcess.call("bob@pbx.test", on: server, as: "alice", ["--duration", "2.5"])
            #expect(try alice.waitForExit(timeout: 45) == 0, "\(alice.report)")
            #expect(try peer.waitForExit(timeout: 20) == 0, "\(peer.report)")
            #expect(alice.eventNames.filter { $0 == "answered" }.count == 1, "\(alice.eventNames)")
            let ended = try alice.waitForEvent("ended", timeout: 1)
            #expect(ended["cause"] as? String == "hungUp", "\(ended)")
            #expect(Self.logLines(server, "sip.answered").count == 1, "\(server.process?.report ?? "")")
        }

        /// The route names UDP, but with four 200-byte `x-` headers the INVITE passes 1300
        /// bytes: it must go over TCP (RFC 3261 §18.1.1), its Via saying so, and the ACK and
        /// BYE follow over TCP. SIPp listens on TCP only (scripts/sipp/uas-large-invite.xml).
        @Test func anINVITEOver1300BytesGoesOverTCP() throws {
            let peer = try SIPpPeer(scenario: "uas-large-invite", transport: "t1")
            let server = try Self.gateway(to: peer)
            let pads = zip(1...4, ["a", "b", "c", "d"]).flatMap { ["--header", "x-pad-\($0)=" + String(repeating: $1, count: 200)] }
            let alice = try SoftphoneProcess.call("bob@pbx.test", on: server, as: "alice", ["--duration", "1"] + pads)
            #expect(try alice.waitForExit(timeout: 45) == 0, "\(alice.report)")
            #expect(try peer.waitForExit(timeout: 20) == 0, "\(peer.report)")
            #expect(try alice.waitForEvent("ended", timeout: 1)["cause"] as? String == "hungUp")
        }

        /// Nobody answers: at parleyd's ring timeout (3 s) the caller's call ends, and the far
        /// side gets CANCEL, answers it 200 and the INVITE 487, which parleyd acknowledges.
        /// A far side that only said 100 Trying ends the call `noAnswer`; one that rang
        /// (180) `timeout` (docs/calls.md, end causes).
        @Test(arguments: zip(["uas-no-answer", "uas-ringing-no-answer"], ["noAnswer", "timeout"]))
        func aCallNobodyAnswersIsCancelledAtTheRingTimeout(scenario: String, cause: String) throws {
            let peer = try SIPpPeer(scenario: scenario)
            let server = try Self.gateway(to: peer, ["--ring-timeout", "3"])
            let alice = try SoftphoneProcess.call("bob@pbx.test", on: server, as: "alice")
            _ = try alice.waitForExit(timeout: 30)
            let ended = try alice.waitForEvent("ended", timeout: 1)
            #expect(ended["cause"] as? String == cause, "\(ended)")
            #expect(try peer.waitForExit(timeout: 20) == 0, "\(peer.report)")
        }
    }
}
