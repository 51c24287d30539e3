import Foundation
import Glibc
import ParleyMediaCore

/// Speech quality through parleyd (docs/bench-speech.md): espeak-ng sentences played by
/// two release `parley` softphones at each other through a release `parleyd`, both ways at
/// once, over loopback impaired by `ImpairmentRelay`; both recordings scored with PESQ-WB
/// and STOI by scripts/bench/speech_score.py, next to the codec alone (`AudioPayloadCodec`,
/// the leg's codec and concealment, in process) under the same loss.
struct SpeechBench {
    /// One impairment and its name in the table.
    struct Condition {
        let name: String
        let impairment: PathImpairment
    }

    /// What one direction of one call gave.
    struct Sample {
        var pesq: Double?
        var stoi: Double?
        var error: String?
        /// The scorer's alignment lag (its window starts `scorerSkipMilliseconds` in).
        var lagMs: Double?
    }

    /// The softphone's `summary` line, the members the table uses.
    struct Summary {
        var established = false
        var lossPercent = 0.0
        var packetsLost = 0
        var cause = "?"
        var framesPlayed = 0
        var framesConcealed = 0
        var framesStretched = 0
        var framesShrunk = 0
        /// Unix ms of the first frame taken from `--play` and of the recording's first sample.
        var captureStartedMs: Double?
        var playoutStartedMs: Double?
    }

    /// Where speech_score.py's loop window starts in a recording (its SKIP_SECONDS).
    static let scorerSkipMilliseconds = 1500.0

    /// Mouth-to-ear delay of the audio recorded by `listener`, spoken by `talker`, from one
    /// clock: the recording holds the talker's loop from `T0 = skip - lag` (modulo the loop)
    /// after the recording's first sample; the talker's first sample left its source at
    /// `capture`, so the delay is `T0 - (capture - playout)`, modulo the loop.
    static func mouthToEar(lagMs: Double, loopMs: Double, talker: Summary, listener: Summary) -> Double? {
        guard let capture = talker.captureStartedMs, let playout = listener.playoutStartedMs, loopMs > 0 else { return nil }
        let delay = (scorerSkipMilliseconds - lagMs - (capture - playout)).truncatingRemainder(dividingBy: loopMs)
        return delay < 0 ? delay + loopMs : delay
    }

    static let conditions: [Condition] = [
        Condition(name: "clean", impairment: PathImpairment()),
        Condition(name: "1 % loss", impairment: PathImpairment(lossPercent: 1)),
        Condition(name: "5 % loss", impairment: PathImpairment(lossPercent: 5)),
        Condition(name: "10 % loss", impairment: PathImpairment(lossPercent: 10)),
        Condition(name: "40±20 ms jitter", impairment: PathImpairment(delayMilliseconds: 40, jitterMilliseconds: 20)),
    ]

    /// Public-domain Harvard sentences (IEEE 1969, list 1), about 10 s at 160 words/min.
    static let sentences = "The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background. "
        + "It is easy to tell the depth of a well. These days a chicken leg is a rare dish."

    /// The server's media ports: each call takes two legs; the relay covers them all.
    static let mediaPorts: ClosedRange<UInt16> = 12_000...12_003

    let calls: Int
    let directory: String

    /// Runs every condition and returns the table.
    static func report(calls: Int) -> String {
        guard let directory = try? makeBenchDirectory("parley-bench-speech") else {
            return "speech: cannot create a temporary directory"
        }
        let bench = SpeechBench(calls: calls, directory: directory)
        do {
            let text = try bench.run()
            if ProcessInfo.processInfo.environment["PARLEY_SPEECH_KEEP"] == nil { try? FileManager.default.removeItem(atPath: bench.directory) }
            return text
        } catch {
            return "speech: \(error) (files kept in \(bench.directory))"
        }
    }

    func run() throws -> String {
        let started = monotonicNanoseconds()
        let reference = directory + "/speech.wav"
        try makeSentences(into: reference)
        let seconds = try WAVFile.read(path: reference).duration
        guard let parley = siblingExecutable("parley") else {
            throw ChildProcess.Failure(description: "parley not found next to ParleyBench: swift build -c release --product parley")
        }
        let scorer = try scorerPath()

        // The codec alone: the same sentences through the leg's codec at each loss rate.
        let lossRates = Array(Set(Self.conditions.map(\.impairment.lossPercent))).sorted()
        var codecFiles: [Double: String] = [:]
        for rate in lossRates {
            let path = directory + "/codec-\(Int(rate)).wav"
            try CodecAlone.run(reference: reference, output: path, lossPercent: rate, seed: 7)
            codecFiles[rate] = path
        }
        let codecScores = try score(scorer, reference: reference, mode: "once", files: lossRates.map { codecFiles[$0]! })

        // The server announces 127.0.0.2, where the relay listens, and binds 127.0.0.1.
        let server = try ServerUnderTest(extraArguments: ["--media-address", "127.0.0.1", "--announce-address", "127.0.0.2"],
                                         mediaPorts: Self.mediaPorts)
        defer { server.stop() }
        let url = "http://\(server.address)"
        // Long enough for the scorer's skipped start plus one whole loop of the sentences.
        let duration = Int(seconds.rounded(.up)) + 3

        var rows: [String] = []
        rows.append("Speech quality through parleyd: \(fixed(seconds, 1)) s of espeak-ng sentences (16 kHz), two `parley` softphones playing them"
            + " at each other, \(calls) call(s) per condition, both directions scored (PESQ-WB P.862.2, STOI);"
            + " impairment by a seeded UDP relay in front of the media ports, on each phone's downlink, so once per direction")
        let check = ImpairmentRelayCheck.run(impairment: PathImpairment(lossPercent: 10, delayMilliseconds: 40, jitterMilliseconds: 20, seed: 99))
        rows.append(check.line)
        rows.append(pad("condition", 17) + lpad("PESQ-WB med (min-max)", 23) + lpad("STOI med", 10) + lpad("codec PESQ", 12)
            + lpad("codec STOI", 12) + lpad("rx loss %", 11) + lpad("concealed %", 13) + lpad("str/shr", 9)
            + lpad("m2e ms med (max)", 18) + lpad("relay fwd/drop", 16) + lpad("failed", 8))
        // PARLEY_SPEECH_ONLY="5 % loss,clean" runs only the conditions named (to look at one).
        let only = ProcessInfo.processInfo.environment["PARLEY_SPEECH_ONLY"].map { $0.split(separator: ",").map(String.init) }
        for (conditionIndex, condition) in Self.conditions.enumerated() where only?.contains(condition.name) ?? true {
            var recordings: [String] = []
            var losses: [Double] = []
            var summaries: [Summary] = []
            var forwarded = 0, dropped = 0, failed = 0
            for call in 0..<calls {
                let tag = "c\(conditionIndex)-\(call)"
                var impairment = condition.impairment
                impairment.seed = UInt64(1000 * conditionIndex + call + 1)
                let relay = try ImpairmentRelay(frontAddress: "127.0.0.2", backAddress: "127.0.0.1", ports: Self.mediaPorts, impairment: impairment)
                let result = runCall(parley, url: url, credentials: server.credentials, tag: tag, duration: duration, play: reference)
                let counts = relay.stop()
                forwarded += counts.forwarded
                dropped += counts.dropped
                if let pair = result {
                    losses += pair.map(\.lossPercent)
                    summaries += pair
                    recordings += [directory + "/\(tag)-alice.wav", directory + "/\(tag)-bob.wav"]
                } else {
                    failed += 1
                }
            }
            let samples = recordings.isEmpty ? [] : try score(scorer, reference: reference, mode: "loop", files: recordings)
            failed += samples.filter { $0.pesq == nil }.count
            let pesq = samples.compactMap(\.pesq).sorted()
            let stoi = samples.compactMap(\.stoi).sorted()
            let codecIndex = lossRates.firstIndex(of: condition.impairment.lossPercent)!
            let codec = codecScores[codecIndex]
            // Recordings and summaries are in the same order: alice (hears bob), bob (hears alice).
            var delays: [Double] = []
            for (index, sample) in samples.enumerated() where sample.pesq != nil {
                let listener = summaries[index], talker = summaries[index ^ 1]
                if let lag = sample.lagMs, let delay = Self.mouthToEar(lagMs: lag, loopMs: seconds * 1000, talker: talker, listener: listener) {
                    delays.append(delay)
                }
            }
            delays.sort()
            let frames = summaries.reduce(0) { $0 + $1.framesPlayed + $1.framesConcealed }
            let concealed = summaries.reduce(0) { $0 + $1.framesConcealed }
            let stretched = summaries.reduce(0) { $0 + $1.framesStretched }
            let shrunk = summaries.reduce(0) { $0 + $1.framesShrunk }
            let range = pesq.isEmpty ? "-" : "\(fixed(median(pesq), 2)) (\(fixed(pesq.first!, 2))-\(fixed(pesq.last!, 2)))"
            rows.append(pad(condition.name, 17) + lpad(range, 23) + lpad(stoi.isEmpty ? "-" : fixed(median(stoi), 3), 10)
                + lpad(codec.pesq.map { fixed($0, 2) } ?? "-", 12) + lpad(codec.stoi.map { fixed($0, 3) } ?? "-", 12)
                + lpad(losses.isEmpty ? "-" : fixed(losses.reduce(0, +) / Double(losses.count), 1), 11)
                + lpad(frames == 0 ? "-" : fixed(100 * Double(concealed) / Double(frames), 2), 13) + lpad("\(stretched)/\(shrunk)", 9)
                + lpad(delays.isEmpty ? "-" : "\(fixed(median(delays), 0)) (\(fixed(delays.last!, 0)))", 18)
                + lpad("\(forwarded)/\(dropped)", 16) + lpad("\(failed)", 8))
            for sample in samples where sample.error != nil { rows.append("  \(condition.name): \(sample.error!)") }
        }
        rows.append("targets: clean >= 3.95, 5 % loss >= 3.8, 10 % loss >= 3.4 (PESQ-WB median); `failed` counts calls that did not complete"
            + " and recordings that could not be scored")
        rows.append("concealed %: frames of concealment (FEC, PLC, comfort noise) of all frames played, both sides' summaries;"
            + " str/shr: jitter-buffer stretches/shrinks, all calls; m2e: mouth-to-ear, from one side's first captured frame to where the"
            + " other's recording holds it (both on this machine's clock), median and max over the scored directions")
        rows.append("took \(fixed(Double(monotonicNanoseconds() - started) / 1e9, 0)) s;"
            + " reproduce: swift build -c release --product parleyd && swift build -c release --product parley && swift run -c release ParleyBench speech --calls \(calls)")
        return rows.joined(separator: "\n")
    }

    /// espeak-ng speaks the sentences (22.05 kHz); sox makes them 16 kHz mono 16-bit.
    private func makeSentences(into path: String) throws {
        let spoken = directory + "/spoken.wav"
        try runTool(["espeak-ng", "-v", "en-us", "-s", "160", "-w", spoken, Self.sentences], what: "espeak-ng (scripts/install-deps.sh bench)")
        try runTool(["sox", spoken, "-r", "16000", "-b", "16", "-c", "1", path], what: "sox (scripts/install-deps.sh bench)")
    }

    private func runTool(_ arguments: [String], what: String) throws {
        let child = try ChildProcess(path: commandPath(arguments[0]), arguments: Array(arguments.dropFirst()), pipeStdin: false, pipeStdout: false)
        var status: Int32 = 0
        guard waitpid(child.pid, &status, 0) == child.pid, status == 0 else {
            throw ChildProcess.Failure(description: "\(what) failed: \(arguments.prefix(1).joined())")
        }
        _ = child.waitExit(timeoutMs: 10)
    }

    /// One call, alice calling bob, each playing `play` and recording the other; nil when
    /// it did not complete (either side not established, or not ended `hungUp`).
    private func runCall(_ parley: String, url: String, credentials: BenchCredentials, tag: String, duration: Int, play: String) -> [Summary]? {
        let common = ["--server", url, "--app", credentials.key, "--secret", credentials.secret, "--play", play, "--json"]
        guard let bob = try? ChildProcess(path: parley, arguments: ["listen", "--as", "bob-\(tag)", "--answer", "--count", "1",
                                                                    "--record", directory + "/\(tag)-bob.wav"] + common,
                                          pipeStdin: false, pipeStdout: true, stderrPath: directory + "/\(tag)-bob.log") else { return nil }
        var listening = false
        while let line = bob.readLine(timeoutMs: 15_000) {
            if line.contains("\"event\":\"listening\"") { listening = true; break }
        }
        guard listening, let alice = try? ChildProcess(
            path: parley, arguments: ["call", "bob-\(tag)", "--as", "alice-\(tag)", "--duration", "\(duration)",
                                      "--record", directory + "/\(tag)-alice.wav"] + common,
            pipeStdin: false, pipeStdout: true, stderrPath: directory + "/\(tag)-alice.log") else {
            bob.terminate()
            return nil
        }
        let aliceSummary = Self.summary(of: alice, timeoutMs: Int32(duration + 30) * 1000, saving: directory + "/\(tag)-alice.json")
        alice.waitExit(timeoutMs: 25_000)
        let bobSummary = Self.summary(of: bob, timeoutMs: 30_000, saving: directory + "/\(tag)-bob.json")
        bob.waitExit(timeoutMs: 25_000)
        alice.terminate()
        bob.terminate()
        guard let aliceSummary, let bobSummary, aliceSummary.established, bobSummary.established,
              aliceSummary.cause == "hungUp", bobSummary.cause == "hungUp" else { return nil }
        return [aliceSummary, bobSummary]
    }

    /// The `summary` line of a softphone's `--json` output, read to its end; every line is
    /// kept in `saving` for a look afterwards (`PARLEY_SPEECH_KEEP=1`).
    private static func summary(of child: ChildProcess, timeoutMs: Int32, saving path: String) -> Summary? {
        var found: Summary?
        var lines: [String] = []
        defer { try? (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: false, encoding: .utf8) }
        while let line = child.readLine(timeoutMs: timeoutMs) {
            lines.append(line)
            guard line.contains("\"event\":\"summary\""),
                  let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
            var summary = Summary()
            summary.established = object["established"] as? Bool ?? false
            summary.lossPercent = (object["lossPercent"] as? NSNumber)?.doubleValue ?? 0
            summary.packetsLost = (object["packetsLost"] as? NSNumber)?.intValue ?? 0
            summary.cause = object["cause"] as? String ?? "?"
            summary.framesPlayed = (object["framesPlayed"] as? NSNumber)?.intValue ?? 0
            summary.framesConcealed = (object["framesConcealed"] as? NSNumber)?.intValue ?? 0
            summary.framesStretched = (object["framesStretched"] as? NSNumber)?.intValue ?? 0
            summary.framesShrunk = (object["framesShrunk"] as? NSNumber)?.intValue ?? 0
            summary.captureStartedMs = (object["audioCaptureStartedMs"] as? NSNumber)?.doubleValue
            summary.playoutStartedMs = (object["audioPlayoutStartedMs"] as? NSNumber)?.doubleValue
            found = summary
        }
        return found
    }

    /// Runs the scorer on `files`; one sample per file, in order.
    private func score(_ scorer: String, reference: String, mode: String, files: [String]) throws -> [Sample] {
        // The python3 of this process's PATH, the one install-deps.sh installed pesq into
        // (a child gets a minimal PATH).
        let child = try ChildProcess(path: commandPath("python3"), arguments: [scorer, reference, mode] + files,
                                     pipeStdin: false, pipeStdout: true, stderrPath: directory + "/score.log")
        var byFile: [String: Sample] = [:]
        while let line = child.readLine(timeoutMs: 120_000) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let file = object["file"] as? String else { continue }
            byFile[file] = Sample(pesq: (object["pesq"] as? NSNumber)?.doubleValue, stoi: (object["stoi"] as? NSNumber)?.doubleValue,
                                  error: (object["error"] as? String).map { "\(file.split(separator: "/").last ?? ""): \($0)" },
                                  lagMs: (object["lagMs"] as? NSNumber)?.doubleValue)
        }
        child.waitExit(timeoutMs: 10_000)
        guard !byFile.isEmpty else {
            throw ChildProcess.Failure(description: "the scorer printed nothing (pesq and pystoi: scripts/install-deps.sh bench; log \(directory)/score.log)")
        }
        return files.map { byFile[$0] ?? Sample(error: "\($0): not scored") }
    }

    /// scripts/bench/speech_score.py from the package root: the working directory (`swift
    /// run`), else three levels above this executable (.build/<triple>/release).
    private func scorerPath() throws -> String {
        let relative = "scripts/bench/speech_score.py"
        var candidates = [FileManager.default.currentDirectoryPath + "/" + relative]
        if let me = currentExecutablePath() {
            var url = URL(fileURLWithPath: me)
            for _ in 0..<4 {
                url.deleteLastPathComponent()
                candidates.append(url.path + "/" + relative)
            }
        }
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw ChildProcess.Failure(description: "\(relative) not found: run from the package root")
        }
        return found
    }
}

/// `name` as found on this process's PATH (the first executable match), else `name` itself.
func commandPath(_ name: String) -> String {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") where access("\(directory)/\(name)", X_OK) == 0 { return "\(directory)/\(name)" }
    return name
}

/// An executable built next to this one, or nil.
func siblingExecutable(_ name: String) -> String? {
    guard let me = currentExecutablePath(), let slash = me.lastIndex(of: "/") else { return nil }
    let path = String(me[..<slash]) + "/" + name
    return access(path, X_OK) == 0 ? path : nil
}

/// The middle of sorted values (the mean of the two middle ones for an even count).
func median(_ sorted: [Double]) -> Double {
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

extension WAVFile {
    /// Length in seconds.
    var duration: Double { Double(samples.count / max(1, channels)) / Double(sampleRate) }
}
