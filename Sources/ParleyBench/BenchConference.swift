import Foundation
import Glibc
import ParleyNetCore
import ParleyNetLinux

// The `conference` group of `make bench` (issue 11, docs/bench-conference.md): conference
// mixers under a room of plain-RTP participants on loopback, at 10, 30 and 60 participants,
// 16 and 48 kHz: Janus's AudioBridge, then parleyd itself (each participant a SIP call to
// a room's number, its media plain RTP), on the same load, with the ratio of their
// costs (`--janus-only` or `--parley-only` runs one). Settings (environment): PARLEY_CONFERENCE_STEPS (10,30,60),
// PARLEY_CONFERENCE_RATES (16000,48000), PARLEY_CONFERENCE_WARMUP_SECONDS (2),
// PARLEY_CONFERENCE_SECONDS (10), PARLEY_CONFERENCE_TALKERS (3), PARLEY_CONFERENCE_COMPLEXITY (4),
// PARLEY_CONFERENCE_KEEP (keep Janus's files in /tmp; PARLEY_SERVER_KEEP keeps parleyd's).

private func say(_ line: String) {
    print(line)
    fflush(nil)
}

/// The settings of one run, read once from the environment.
struct ConferenceBenchSettings {
    let stepsText: String
    let steps: [Int]
    let ratesText: String
    let rates: [Int]
    let warmupSeconds: Int
    let windowSeconds: Int
    let talkers: Int
    let complexity: Int
    let keep: Bool

    init() {
        let environment = ProcessInfo.processInfo.environment
        stepsText = environment["PARLEY_CONFERENCE_STEPS"] ?? "10,30,60"
        steps = stepsText.split(separator: ",").compactMap { Int($0) }.filter { (2...ConferenceLoadGenerator.maximumParticipants).contains($0) }
        ratesText = environment["PARLEY_CONFERENCE_RATES"] ?? "16000,48000"
        rates = ratesText.split(separator: ",").compactMap { Int($0) }.filter { [16_000, 48_000].contains($0) }
        warmupSeconds = serverEnvironmentInt("PARLEY_CONFERENCE_WARMUP_SECONDS", 2, 1...60)
        windowSeconds = serverEnvironmentInt("PARLEY_CONFERENCE_SECONDS", 10, 1...300)
        talkers = serverEnvironmentInt("PARLEY_CONFERENCE_TALKERS", 3, 0...ConferenceLoadGenerator.maximumParticipants)
        complexity = serverEnvironmentInt("PARLEY_CONFERENCE_COMPLEXITY", 4, 0...10)
        keep = environment["PARLEY_CONFERENCE_KEEP"] != nil
    }

    func command(only: ConferenceMixerKind?) -> String {
        "reproduce: PARLEY_CONFERENCE_STEPS=\(stepsText) PARLEY_CONFERENCE_RATES=\(ratesText) PARLEY_CONFERENCE_WARMUP_SECONDS=\(warmupSeconds)"
            + " PARLEY_CONFERENCE_SECONDS=\(windowSeconds) PARLEY_CONFERENCE_TALKERS=\(talkers) PARLEY_CONFERENCE_COMPLEXITY=\(complexity)"
            + " swift run -c release ParleyBench conference" + (only.map { " --\($0.rawValue)-only" } ?? "")
    }
}

/// What one step (a room of `participants` at `sampleRate`) measured.
struct ConferenceStep {
    let mixer: String
    let sampleRate: Int
    let participants: Int
    let windowSeconds: Double
    /// The mixer's CPU over the window above its idle level, in seconds.
    let mixerCPUSeconds: Double
    /// The bench process's CPU over the window (the load generator: encoders, sends,
    /// receives), in seconds.
    let generatorCPUSeconds: Double
    /// Packets received from the mixer per participant-second (50 when all arrive).
    let receivedPerParticipantSecond: Double
    /// Frames sent per participant-second (50 when the pacers keep up).
    let sentPerParticipantSecond: Double
    let lossFraction: Double
    let silentParticipants: Int
    let meanJitterSeconds: Double
    let maximumJitterSeconds: Double
    let longestGapSeconds: Double
    let pacingLatenessP99: Double
    let skippedTicks: Int
    let mixerTickLateness: (p50: Double, p99: Double)?
    let generatorErrors: Int
    let firstGeneratorError: String?
    /// What the mixer itself said about the step (`ConferenceMixerUnderTest.stepNote`).
    let mixerNote: String?

    /// The mixer's CPU per participant per 20 ms tick, in seconds.
    var cpuPerParticipantTick: Double {
        mixerCPUSeconds / (windowSeconds / ConferenceLoadGenerator.frameSeconds) / Double(participants)
    }

    /// One core's worth of participants at this step's cost per participant.
    var participantsPerCore: Double {
        cpuPerParticipantTick > 0 ? ConferenceLoadGenerator.frameSeconds / cpuPerParticipantTick : .nan
    }

    /// The generator sent 95 % of its frames and skipped no tick; a step where it did not
    /// measures the generator's shortage of CPU, not the mixer.
    var generatorKeptUp: Bool { sentPerParticipantSecond >= 47.5 && skippedTicks == 0 }

    /// Loss appeared, or the mixer's tick lateness p99 went over 5 ms (issue 11's limit).
    var overLimit: Bool {
        lossFraction > 0 || silentParticipants > 0 || (mixerTickLateness.map { $0.p99 > 0.005 } ?? false)
    }
}

/// Runs the mixers asked for at every rate and step, printing each step as it is measured,
/// then the per-core figures and, when two mixers ran, their ratio.
func printConferenceReport(only: ConferenceMixerKind?) {
    let settings = ConferenceBenchSettings()
    let kinds: [ConferenceMixerKind] = only.map { [$0] } ?? ConferenceMixerKind.allCases
    say("")
    say("Conference: one room of plain-RTP participants on loopback, each an Opus encoder in the bench (complexity \(settings.complexity),")
    say("the room's rate, 20 ms, 32 kbit/s); \(settings.talkers) talkers send distinct tones, the rest low-level noise (about -54 dBFS). Janus:")
    say("\(JanusAudioBridge.executable ?? "not installed"), AudioBridge plugin, each participant joined with the join's rtp object and quality \(settings.complexity).")
    say("Parley: \(ServerUnderTest.executable ?? "parleyd not built (swift build -c release --product parleyd)"), each participant a SIP call from")
    say("the bench (its trunk) to a number whose rule is a room (--sip-number N=KEY:conference:bench), its SDP plain-RTP Opus at the")
    say("participant's socket; --conference-rate the step's, --conference-opus-complexity \(settings.complexity); tick lateness from /metrics.")
    say("Per step: \(settings.warmupSeconds) s warm-up, then \(settings.windowSeconds) s measured. CPU = utime+stime from /proc/<pid>/stat, the mixer's")
    say("above its idle level; us/part-tick = its CPU per participant per 20 ms tick; part/core = 20 ms / that. rx/s = packets the")
    say("mixer sent each participant per second (50 = all); loss from RTP sequence gaps; jitter RFC 3550 (mean, max over participants);")
    say("gap = the longest silence any participant saw; gen cores = the bench process (the load generator); pace p99 = its pacing")
    say("lateness. \(sysconf(Int32(_SC_NPROCESSORS_ONLN))) cores shared by the mixer, the generator and other processes. Load average at start: "
        + (readSmallFile("/proc/loadavg")?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?") + ".")
    guard !settings.steps.isEmpty, !settings.rates.isEmpty else {
        say("  not run: no valid steps (PARLEY_CONFERENCE_STEPS) or rates (PARLEY_CONFERENCE_RATES)")
        return
    }
    var results: [ConferenceMixerKind: [ConferenceStep]] = [:]
    for kind in kinds {
        results[kind] = runMixer(kind, settings)
    }
    summarize(results, kinds: kinds, settings: settings)
    say("  " + settings.command(only: only))
}

/// Every rate and step on one mixer; the steps that ran.
private func runMixer(_ kind: ConferenceMixerKind, _ settings: ConferenceBenchSettings) -> [ConferenceStep] {
    say("")
    let directory: String
    let mixer: any ConferenceMixerUnderTest
    do {
        directory = try makeBenchDirectory("parley-bench-conference-\(kind.rawValue)")
        do {
            mixer = try kind.start(directory: directory, settings: ConferenceCodecSettings(
                sampleRate: settings.rates.first ?? 48_000, complexity: settings.complexity, talkers: settings.talkers))
        } catch {
            if !settings.keep { try? FileManager.default.removeItem(atPath: directory) }
            throw error
        }
    } catch {
        say("\(kind.rawValue): not run: \(error)")
        return []
    }
    defer {
        mixer.stop()
        if settings.keep { say("  files kept in \(directory)") } else { try? FileManager.default.removeItem(atPath: directory) }
    }
    // Its idle level: the process with no room, 2 s.
    let idleStart = (cpu: mixer.cpuSeconds(), wall: wallSeconds())
    usleep(2_000_000)
    let idleCores = (mixer.cpuSeconds() - idleStart.cpu) / (wallSeconds() - idleStart.wall)
    say("\(mixer.name): idle \(fixed(idleCores, 4)) cores")
    say("   rate  part  us/part-tick  part/core  mixer cores   rx/s  loss %  jitter ms (mean/max)  gap ms  gen cores  pace p99 ms  tick p99 ms")
    var steps: [ConferenceStep] = []
    for rate in settings.rates {
        for participants in settings.steps {
            do {
                let step = try measure(mixer, rate: rate, participants: participants, idleCores: idleCores, settings)
                steps.append(step)
                say("  " + lpad("\(rate / 1000)k", 5) + lpad("\(participants)", 6) + lpad(fixed(step.cpuPerParticipantTick * 1e6, 1), 14)
                    + lpad(fixed(step.participantsPerCore, 0), 11) + lpad(fixed(step.mixerCPUSeconds / step.windowSeconds, 3), 13)
                    + lpad(fixed(step.receivedPerParticipantSecond, 1), 7) + lpad(fixed(step.lossFraction * 100, 2), 8)
                    + lpad(fixed(step.meanJitterSeconds * 1e3, 2) + "/" + fixed(step.maximumJitterSeconds * 1e3, 2), 22)
                    + lpad(fixed(step.longestGapSeconds * 1e3, 0), 8) + lpad(fixed(step.generatorCPUSeconds / step.windowSeconds, 3), 11)
                    + lpad(fixed(step.pacingLatenessP99 * 1e3, 2), 13) + lpad(step.mixerTickLateness.map { fixed($0.p99 * 1e3, 2) } ?? "-", 13)
                    + (step.silentParticipants > 0 ? "  \(step.silentParticipants) participants got nothing" : "")
                    + (abs(step.sentPerParticipantSecond - 50) > 1 ? "  generator sent \(fixed(step.sentPerParticipantSecond, 1))/s" : "")
                    + (step.skippedTicks > 0 ? "  generator skipped \(step.skippedTicks) ticks" : "")
                    + (step.generatorErrors > 0 ? "  \(step.generatorErrors) send errors: \(step.firstGeneratorError ?? "?")" : ""))
                if let note = step.mixerNote { say("               " + note) }
            } catch {
                say("  " + lpad("\(rate / 1000)k", 5) + lpad("\(participants)", 6) + "  not run: \(error)")
                try? mixer.closeRoom()
            }
        }
    }
    return steps
}

/// One room of `participants` at `rate`: join, warm up, measure, close.
private func measure(_ mixer: any ConferenceMixerUnderTest, rate: Int, participants: Int, idleCores: Double,
                     _ settings: ConferenceBenchSettings) throws -> ConferenceStep {
    let codec = ConferenceCodecSettings(sampleRate: rate, complexity: settings.complexity, talkers: settings.talkers)
    let sockets = try ConferenceLoadGenerator.bindLoopbackSockets(count: participants)
    defer { sockets.forEach { $0.close() } }
    let remotes = try mixer.openRoom(participants: sockets.map(\.localAddress), settings: codec)
    defer { try? mixer.closeRoom() }
    let links = zip(sockets, remotes).map { ConferenceParticipantLink(socket: $0, sendTo: $1) }
    // Pacing from two threads once one would encode more than about 30 frames per tick.
    let generator = try ConferenceLoadGenerator(links: links, settings: codec, senderThreads: participants > 30 ? 2 : 1,
                                                maximumSeconds: Double(settings.warmupSeconds + settings.windowSeconds) + 5)
    generator.start()
    defer { generator.stop() }
    usleep(UInt32(settings.warmupSeconds) * 1_000_000)
    generator.clearLateness()
    let before = (snapshot: generator.snapshot(), mixer: mixer.cpuSeconds(), bench: processCPUSeconds(getpid()) ?? .nan, wall: wallSeconds())
    usleep(UInt32(settings.windowSeconds) * 1_000_000)
    let after = (snapshot: generator.snapshot(), mixer: mixer.cpuSeconds(), bench: processCPUSeconds(getpid()) ?? .nan, wall: wallSeconds())
    let tickLateness = mixer.tickLateness(overLast: Double(settings.windowSeconds))
    let note = mixer.stepNote()
    let window = after.wall - before.wall
    var packets = 0, expected = 0, lost = 0, silent = 0
    var jitters: [Double] = []
    for (now, earlier) in zip(after.snapshot.received, before.snapshot.received) {
        let between = now.since(earlier)
        packets += between.packets
        expected += between.expected
        lost += between.lost
        if between.packets == 0 { silent += 1 }
        jitters.append(now.jitterMilliseconds / 1000)
    }
    let sent = zip(after.snapshot.sent, before.snapshot.sent).reduce(0) { $0 + $1.0 - $1.1 }
    return ConferenceStep(
        mixer: mixer.name, sampleRate: rate, participants: participants, windowSeconds: window,
        mixerCPUSeconds: max(0, after.mixer - before.mixer - idleCores * window), generatorCPUSeconds: after.bench - before.bench,
        receivedPerParticipantSecond: Double(packets) / Double(participants) / window,
        sentPerParticipantSecond: Double(sent) / Double(participants) / window,
        lossFraction: expected > 0 ? Double(lost) / Double(expected) : 0, silentParticipants: silent,
        meanJitterSeconds: jitters.reduce(0, +) / Double(max(1, jitters.count)), maximumJitterSeconds: jitters.max() ?? .nan,
        longestGapSeconds: after.snapshot.received.map(\.longestGap).max() ?? .nan,
        pacingLatenessP99: quantile(after.snapshot.lateness, 0.99), skippedTicks: after.snapshot.skippedTicks - before.snapshot.skippedTicks,
        mixerTickLateness: tickLateness, generatorErrors: after.snapshot.errors - before.snapshot.errors,
        firstGeneratorError: after.snapshot.firstError, mixerNote: note)
}

/// Per mixer and rate: the cost per participant per tick at the largest step within the
/// limit, participants per core from it, and where loss appeared; the ratio when two ran.
private func summarize(_ results: [ConferenceMixerKind: [ConferenceStep]], kinds: [ConferenceMixerKind], settings: ConferenceBenchSettings) {
    say("")
    var perCore: [ConferenceMixerKind: [Int: Double]] = [:]
    for kind in kinds {
        guard let steps = results[kind], !steps.isEmpty else {
            say("  \(kind.rawValue): no figures")
            continue
        }
        for rate in settings.rates {
            let short = steps.filter { $0.sampleRate == rate && !$0.generatorKeptUp }.map { "\($0.participants)" }
            if !short.isEmpty {
                say("  \(steps[0].mixer), \(rate / 1000) kHz: not valid, the generator fell behind, at \(short.joined(separator: ", ")) participants")
            }
            let atRate = steps.filter { $0.sampleRate == rate && $0.generatorKeptUp }
            guard let largest = atRate.filter({ !$0.overLimit }).max(by: { $0.participants < $1.participants }) else {
                say("  \(steps[0].mixer), \(rate / 1000) kHz: no valid step without loss or lateness")
                continue
            }
            perCore[kind, default: [:]][rate] = largest.participantsPerCore
            let over = atRate.filter(\.overLimit).map { "\($0.participants)" }
            say("  \(largest.mixer), \(rate / 1000) kHz: \(fixed(largest.cpuPerParticipantTick * 1e6, 1)) us of CPU per participant per tick at"
                + " \(largest.participants) participants, so about \(fixed(largest.participantsPerCore, 0)) participants per core"
                + " (an extrapolation from \(largest.participants)); "
                + (over.isEmpty ? "no loss at any step" : "loss or lateness at \(over.joined(separator: ", ")) participants"))
        }
    }
    if let janus = perCore[.janus], let parley = perCore[.parley] {
        for rate in settings.rates {
            guard let j = janus[rate], let p = parley[rate] else { continue }
            say("  ratio at \(rate / 1000) kHz: parleyd carries \(fixed(p / j, 2))x Janus's participants per core")
        }
    } else if kinds.count > 1 {
        say("  no ratio: " + kinds.filter { perCore[$0] == nil }.map(\.rawValue).joined(separator: ", ") + " gave no figure")
    }
    if let janus = results[.janus], let parley = results[.parley], !janus.isEmpty, !parley.isEmpty {
        say("")
        say("  CPU per participant per 20 ms tick, same load (x = Janus / Parley; a step either mixer failed or the generator fell behind in is marked)")
        say("   rate  part  Janus us  Parley us      x")
        for rate in settings.rates {
            for participants in settings.steps {
                guard let j = janus.first(where: { $0.sampleRate == rate && $0.participants == participants }),
                      let p = parley.first(where: { $0.sampleRate == rate && $0.participants == participants }) else { continue }
                let marks = [(j.overLimit ? "Janus over the limit" : nil), (p.overLimit ? "Parley over the limit" : nil),
                             (!j.generatorKeptUp || !p.generatorKeptUp ? "generator fell behind" : nil)].compactMap { $0 }
                say("  " + lpad("\(rate / 1000)k", 5) + lpad("\(participants)", 6) + lpad(fixed(j.cpuPerParticipantTick * 1e6, 1), 10)
                    + lpad(fixed(p.cpuPerParticipantTick * 1e6, 1), 11)
                    + lpad(p.cpuPerParticipantTick > 0 ? fixed(j.cpuPerParticipantTick / p.cpuPerParticipantTick, 2) : "-", 7)
                    + (marks.isEmpty ? "" : "  (" + marks.joined(separator: "; ") + ")"))
            }
        }
    }
}
