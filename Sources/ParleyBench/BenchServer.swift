import Foundation
import Glibc

// The `server` group of `make bench` (issue 4): one parleyd process under raw protocol
// clients on loopback (docs/bench-server.md). Rows (PARLEY_SERVER_ROWS, comma-separated, default all):
//   setups    call set-ups per second, signaling only; server CPU per set-up; latency
//   media     the same with real device media legs (ICE, DTLS-SRTP, Opus); latency
//   idle      memory per idle connected device, and the server's CPU while they ping
//   capacity  concurrent established calls with media before loss exceeds 1 %
// Settings (environment): PARLEY_SERVER_PAIRS (signaling pairs, 96), PARLEY_SERVER_MEDIA_PAIRS
// (16), PARLEY_SERVER_SECONDS (per set-up row, 10), PARLEY_SERVER_DEVICES (10000),
// PARLEY_SERVER_IDLE_SECONDS (20), PARLEY_SERVER_STEPS (10,25,50,100,150,200,300),
// PARLEY_SERVER_HOLD_SECONDS (5), PARLEY_SERVER_KEEP (keep each server's data directory and
// log in /tmp). Each row starts a fresh parleyd.

private func say(_ line: String) {
    print(line)
    fflush(nil)
}

/// The command that reproduces one row with the settings it ran with.
private func command(_ row: String, _ settings: [(String, Int)]) -> String {
    let environment = ([("PARLEY_SERVER_ROWS", row)] + settings.map { ($0.0, String($0.1)) }).map { "\($0.0)=\($0.1)" }
    return "reproduce: swift build -c release --product parleyd && " + environment.joined(separator: " ")
        + " swift run -c release ParleyBench server"
}

private func loadAverage() -> String {
    readSmallFile("/proc/loadavg")?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
}

/// Runs the rows asked for, printing each figure and its command as it is measured.
func printServerReport() {
    let environment = ProcessInfo.processInfo.environment
    let rows = Set((environment["PARLEY_SERVER_ROWS"] ?? "setups,media,idle,capacity").split(separator: ",").map(String.init))
    let pairs = serverEnvironmentInt("PARLEY_SERVER_PAIRS", 96, 1...1000)
    let mediaPairs = serverEnvironmentInt("PARLEY_SERVER_MEDIA_PAIRS", 16, 1...200)
    let seconds = serverEnvironmentInt("PARLEY_SERVER_SECONDS", 10, 1...600)
    let devices = serverEnvironmentInt("PARLEY_SERVER_DEVICES", 10_000, 1...100_000)
    let idleSeconds = serverEnvironmentInt("PARLEY_SERVER_IDLE_SECONDS", 20, 1...600)
    let holdSeconds = serverEnvironmentInt("PARLEY_SERVER_HOLD_SECONDS", 5, 1...60)
    let stepsText = environment["PARLEY_SERVER_STEPS"] ?? "10,25,50,100,150,200,300"
    let steps = stepsText.split(separator: ",").compactMap { Int($0) }.filter { (1...2000).contains($0) }

    // One descriptor per device in the bench and one in the server, plus slack;
    // the server child inherits the limit.
    let limit = raiseOpenFileLimit(to: rlim_t(max(4096, devices + 4096)))
    say("")
    say("Server: parleyd (\(ServerUnderTest.executable ?? "not built"), its defaults, own process) under raw protocol clients on loopback.")
    say("Load generator and server share this machine's \(sysconf(Int32(_SC_NPROCESSORS_ONLN))) cores; server CPU = user+system of its")
    say("process from /proc/<pid>/stat, memory = its VmRSS. Load average at start: \(loadAverage()); open-file limit \(limit).")

    if rows.contains("setups") { setupRow(pairs: pairs, seconds: seconds, media: false) }
    if rows.contains("media") { setupRow(pairs: mediaPairs, seconds: seconds, media: true) }
    if rows.contains("idle") { idleRow(devices: devices, idleSeconds: idleSeconds, limit: limit) }
    if rows.contains("capacity") { capacityRow(steps: steps, stepsText: stepsText, holdSeconds: holdSeconds) }
}

private func setupRow(pairs: Int, seconds: Int, media: Bool) {
    let row = media ? "media" : "setups"
    let settings = media ? [("PARLEY_SERVER_MEDIA_PAIRS", pairs), ("PARLEY_SERVER_SECONDS", seconds)]
        : [("PARLEY_SERVER_PAIRS", pairs), ("PARLEY_SERVER_SECONDS", seconds)]
    say("")
    say(media ? "Call set-ups with media (device legs: full ICE, DTLS-SRTP, Opus tone; each call reaches call.established):"
        : "Call set-ups, signaling only (call.start .. call.answered .. call.hangup, both call.ended; SDP from unstarted MediaLegCores):")
    let server: ServerUnderTest
    do { server = try ServerUnderTest() } catch {
        say("  not run: \(error)")
        return
    }
    defer { server.stop() }
    let deviceMedia: DeviceMedia?
    if media {
        guard let made = try? DeviceMedia() else {
            say("  not run: cannot start the device event loops")
            return
        }
        deviceMedia = made
    } else {
        deviceMedia = nil
    }
    defer { deviceMedia?.shutdown() }
    let run = runCallSetups(server: server, pairs: pairs, seconds: Double(seconds), media: deviceMedia, tag: row)
    let rate = Double(run.setups) / run.wallSeconds
    let cap = Double(pairs) * setupsPerPairPerSecond
    say("  \(pairs) pairs x \(seconds) s: \(run.setups) set-ups, \(fixed(rate, 1)) set-ups/s"
        + "  server CPU \(fixed(run.serverCPUSeconds / Double(max(run.setups, 1)) * 1e6, 0)) us/set-up"
        + " (\(fixed(run.serverCPUSeconds / run.wallSeconds, 2)) cores), bench \(fixed(run.benchCPUSeconds / run.wallSeconds, 2)) cores")
    say("  per server core: \(fixed(Double(run.setups) / max(run.serverCPUSeconds, 1e-9), 0)) set-ups per CPU-second;"
        + " busiest server threads (cores): \(run.serverThreads)")
    say("  latency call.start -> callee call.incoming: p50 \(fixed(quantile(run.startToIncoming, 0.5) * 1e3, 2)) ms,"
        + " p99 \(fixed(quantile(run.startToIncoming, 0.99) * 1e3, 2)) ms (\(run.startToIncoming.count) calls)")
    if media {
        say("  latency call.answer -> both call.established: p50 \(fixed(quantile(run.answerToEstablished, 0.5) * 1e3, 1)) ms,"
            + " p99 \(fixed(quantile(run.answerToEstablished, 0.99) * 1e3, 1)) ms (\(run.answerToEstablished.count) calls)")
    }
    let pacedShare = run.pacingWait / (Double(pairs) * run.wallSeconds)
    say("  pairs pace themselves to \(Int(setupsPerPairPerSecond))/s each (cap \(Int(cap))/s); time spent waiting for the pace: \(fixed(pacedShare * 100, 0)) %"
        + (pacedShare > 0.2 ? " (the cap, not the server, bounds this rate: raise PARLEY_SERVER_PAIRS)" : ""))
    if run.failures > 0 { say("  FAILURES: \(run.failures); first: \(run.firstFailure ?? "?")") }
    say("  " + command(row, settings))
}

private func idleRow(devices: Int, idleSeconds: Int, limit: rlim_t) {
    say("")
    say("Idle connected devices (WebSocket + hello, then a ping every heartbeat):")
    let server: ServerUnderTest
    do { server = try ServerUnderTest() } catch {
        say("  not run: \(error)")
        return
    }
    defer { server.stop() }
    let run = runIdleDevices(server: server, devices: devices, idleSeconds: Double(idleSeconds))
    say("  \(run.connected) of \(devices) connected in \(fixed(run.connectSeconds, 1)) s; server RSS \(fixed(run.residentBeforeKiB / 1024, 1)) MiB"
        + " with 0 -> \(fixed(run.residentAfterKiB / 1024, 1)) MiB: \(fixed(run.kibPerDevice, 1)) KiB per idle device (user-space memory;"
        + " kernel socket buffers not included)")
    say("  idle for \(fixed(run.idleSeconds, 0)) s: server CPU \(fixed(run.idleServerCPUSeconds / run.idleSeconds * 100, 1)) % of one core,"
        + " \(run.pings) pings answered (\(fixed(Double(run.pings) / run.idleSeconds, 0))/s)")
    if run.failures > 0 { say("  FAILURES: \(run.failures); first: \(run.firstFailure ?? "?")") }
    say("  " + command("idle", [("PARLEY_SERVER_DEVICES", devices), ("PARLEY_SERVER_IDLE_SECONDS", idleSeconds)]))
}

private func capacityRow(steps: [Int], stepsText: String, holdSeconds: Int) {
    say("")
    say("Concurrent established calls with media (tones both ways), each step held \(holdSeconds) s. loss = lost / (received + lost),")
    say("summed over every device leg's receive side (both directions); delivered and sent = packets received and frames sent")
    say("against one per 20 ms per leg; machine = busy cores of the whole machine (other processes included). Stops after the")
    say("first step with set-up failures, over 1 % loss, or with sent under 95 % (the bench's own legs, which encode and")
    say("decode Opus for every device, are short of CPU):")
    let server: ServerUnderTest
    do { server = try ServerUnderTest() } catch {
        say("  not run: \(error)")
        return
    }
    defer { server.stop() }
    say("  calls   loss %   delivered %   sent %   server cores   server ms/s per call   bench cores   machine cores")
    say("  (server ms/s per call: server CPU above its idle level before the first call, per call)")
    let results = runCapacitySteps(server: server, steps: steps, holdSeconds: Double(holdSeconds)) { step in
        say("  " + lpad("\(step.calls)", 5) + lpad(fixed(step.loss * 100, 2), 9) + lpad(fixed(step.delivered * 100, 1), 14)
            + lpad(fixed(step.sent * 100, 1), 9) + lpad(fixed(step.serverCores, 2), 15)
            + lpad(fixed(step.serverMillisecondsPerCall, 2), 23) + lpad(fixed(step.benchCores, 2), 14)
            + lpad(fixed(step.machineCores, 2), 16)
            + (step.setupFailures > 0 ? "   \(step.setupFailures) set-ups failed: \(step.firstFailure ?? "?")" : ""))
    }
    if let last = results.last {
        let within = results.filter(\.passed).last
        say("  highest step with every frame sent and within 1 % loss: \(within.map { String($0.calls) } ?? "none") calls;"
            + " stopped: \(last.stopReason ?? "last step reached")")
        if let within, within.serverMillisecondsPerCall > 0 {
            say("  server CPU per established call (above its idle \(fixed(within.serverIdleCores, 3)) cores): "
                + "\(fixed(within.serverMillisecondsPerCall, 2)) ms per second, so one core would carry about"
                + " \(Int(1000 / within.serverMillisecondsPerCall)) such calls (an extrapolation, not a measurement)")
        }
    } else {
        say("  not run: cannot start the device event loops")
    }
    say("  " + command("capacity", [("PARLEY_SERVER_HOLD_SECONDS", holdSeconds)]).replacingOccurrences(of: "PARLEY_SERVER_ROWS=capacity", with: "PARLEY_SERVER_ROWS=capacity PARLEY_SERVER_STEPS=\(stepsText)"))
}
