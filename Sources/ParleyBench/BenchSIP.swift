import Foundation
import Glibc

// The `sip` group of `make bench` (issue 10, docs/bench-sip.md): parleyd's SIP gateway under
// app-to-SIP calls to SIPp, and Kamailio as a stateful proxy between two SIPps in the same
// run. Rows (PARLEY_SIP_ROWS, comma-separated, default all):
//   gateway  concurrent calls through the gateway (Opus <-> PCMU every 20 ms), stepped up:
//            parleyd's CPU per call-second, calls per core, packets per call-second
//   setups   short calls through the gateway at a few calls per second, hung up at once and
//            held 1 s: parleyd's CPU per call set up and torn down
//   proxy    Kamailio (tm, rr) between a SIPp uac and uas at rising call rates: CPU per call
//   bridge   parleyd bridging a SIPp uac's calls in to a SIPp uas (a back-to-back user agent),
//            at rising call rates: CPU per call, the highest rate with no retransmission
// Settings (environment): PARLEY_SIP_STEPS (10,25,50,100,200), PARLEY_SIP_HOLD_SECONDS (5),
// PARLEY_SIP_DESTINATION (sip: bob@pbx.test routed to SIPp; phone: +4615550101 through the
// trunk), PARLEY_SIP_SETUP_CALLERS (8), PARLEY_SIP_SETUP_RATE (4 calls/s), PARLEY_SIP_SETUP_SECONDS
// (10 per pass), PARLEY_SIP_SETUP_HOLD_MS (1000, the second pass's hold), PARLEY_SIP_PROXY_RATES (200,500,1000,2000), PARLEY_SIP_PROXY_SECONDS (3),
// PARLEY_SIP_PROXY_WORKERS (1: with more, a worker may relay the uas's 200 before another
// relays the 180 sent just before it, and SIPp's built-in uac fails such a call),
// PARLEY_SIP_PROXY_ALLOCATOR (tlsf; Kamailio's own default qm, its debugging allocator, costs
// about twice the CPU per call), PARLEY_SIP_BRIDGE_RATES (25,50,100,200,400), PARLEY_SIP_BRIDGE_SECONDS
// (3), PARLEY_SIP_KEEP (keep every row's files in /tmp).

private func say(_ line: String) {
    print(line)
    fflush(nil)
}

private func loadAverage() -> String {
    readSmallFile("/proc/loadavg")?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
}

/// The settings of one run, read once from the environment.
private struct SIPBenchSettings {
    let rows: Set<String>
    let stepsText: String
    let steps: [Int]
    let holdSeconds: Int
    let destination: GatewayDestination
    let setupCallers: Int
    let setupRate: Int
    let setupSeconds: Int
    let setupHoldMs: Int
    let ratesText: String
    let rates: [Int]
    let proxySeconds: Int
    let proxyWorkers: Int
    let proxyAllocator: String
    let bridgeRatesText: String
    let bridgeRates: [Int]
    let bridgeSeconds: Int
    let keep: Bool

    init() {
        let environment = ProcessInfo.processInfo.environment
        rows = Set((environment["PARLEY_SIP_ROWS"] ?? "gateway,setups,proxy,bridge").split(separator: ",").map(String.init))
        stepsText = environment["PARLEY_SIP_STEPS"] ?? "10,25,50,100,200"
        steps = stepsText.split(separator: ",").compactMap { Int($0) }.filter { (1...1000).contains($0) }
        holdSeconds = serverEnvironmentInt("PARLEY_SIP_HOLD_SECONDS", 5, 1...60)
        destination = GatewayDestination(rawValue: environment["PARLEY_SIP_DESTINATION"] ?? "sip") ?? .sip
        setupCallers = serverEnvironmentInt("PARLEY_SIP_SETUP_CALLERS", 8, 1...64)
        // Two requests a call (call.start, call.hangup) per device stay well under the
        // server's 20 requests/s per connection.
        setupRate = serverEnvironmentInt("PARLEY_SIP_SETUP_RATE", 4, 1...200)
        setupSeconds = serverEnvironmentInt("PARLEY_SIP_SETUP_SECONDS", 10, 1...300)
        setupHoldMs = serverEnvironmentInt("PARLEY_SIP_SETUP_HOLD_MS", 1000, 0...60_000)
        ratesText = environment["PARLEY_SIP_PROXY_RATES"] ?? "200,500,1000,2000"
        rates = ratesText.split(separator: ",").compactMap { Int($0) }.filter { (1...20_000).contains($0) }
        proxySeconds = serverEnvironmentInt("PARLEY_SIP_PROXY_SECONDS", 3, 1...60)
        proxyWorkers = serverEnvironmentInt("PARLEY_SIP_PROXY_WORKERS", 1, 1...64)
        let allocator = environment["PARLEY_SIP_PROXY_ALLOCATOR"] ?? "tlsf"
        proxyAllocator = ["qm", "fm", "tlsf"].contains(allocator) ? allocator : "tlsf"
        bridgeRatesText = environment["PARLEY_SIP_BRIDGE_RATES"] ?? "25,50,100,200,400"
        bridgeRates = bridgeRatesText.split(separator: ",").compactMap { Int($0) }.filter { (1...20_000).contains($0) }
        bridgeSeconds = serverEnvironmentInt("PARLEY_SIP_BRIDGE_SECONDS", 3, 1...60)
        keep = environment["PARLEY_SIP_KEEP"] != nil
    }

    /// The command that reproduces `row` with these settings.
    func command(_ row: String) -> String {
        var environment = ["PARLEY_SIP_ROWS=\(row)"]
        switch row {
        case "gateway":
            environment += ["PARLEY_SIP_STEPS=\(stepsText)", "PARLEY_SIP_HOLD_SECONDS=\(holdSeconds)", "PARLEY_SIP_DESTINATION=\(destination.rawValue)"]
        case "setups":
            environment += ["PARLEY_SIP_SETUP_CALLERS=\(setupCallers)", "PARLEY_SIP_SETUP_RATE=\(setupRate)", "PARLEY_SIP_SETUP_SECONDS=\(setupSeconds)",
                            "PARLEY_SIP_SETUP_HOLD_MS=\(setupHoldMs)", "PARLEY_SIP_DESTINATION=\(destination.rawValue)"]
        case "bridge":
            environment += ["PARLEY_SIP_BRIDGE_RATES=\(bridgeRatesText)", "PARLEY_SIP_BRIDGE_SECONDS=\(bridgeSeconds)"]
        default:
            environment += ["PARLEY_SIP_PROXY_RATES=\(ratesText)", "PARLEY_SIP_PROXY_SECONDS=\(proxySeconds)",
                            "PARLEY_SIP_PROXY_WORKERS=\(proxyWorkers)", "PARLEY_SIP_PROXY_ALLOCATOR=\(proxyAllocator)"]
        }
        return "reproduce: swift build -c release --product parleyd && " + environment.joined(separator: " ")
            + " swift run -c release ParleyBench sip"
    }
}

/// Runs the rows asked for, printing each figure and its command as it is measured, then
/// the comparison of the rows that ran.
func printSIPReport() {
    let settings = SIPBenchSettings()
    say("")
    say("SIP: parleyd's gateway (\(ServerUnderTest.executable ?? "parleyd not built"), own process) calling SIPp (\(SIPpProcess.executable ?? "not installed")),")
    say("and Kamailio (\(KamailioProxy.executable ?? "not installed")) as a stateful proxy between two SIPps, in the same run, on loopback.")
    say("CPU = user+system from /proc/<pid>/stat (Kamailio: its process and every process it forked). This machine's")
    say("\(sysconf(Int32(_SC_NPROCESSORS_ONLN))) cores are shared by the servers, SIPp and the bench's app devices. Load average at start: \(loadAverage()).")
    var gatewayPerCallSecond: Double?
    var setups: (short: GatewaySetupRun, held: GatewaySetupRun)?
    var proxy: [ProxyStep] = []
    if settings.rows.contains("gateway") { gatewayPerCallSecond = gatewayRow(settings) }
    if settings.rows.contains("setups") { setups = setupsRow(settings) }
    if settings.rows.contains("proxy") { proxy = proxyRow(settings) }
    if settings.rows.contains("bridge") { bridgeRow(settings) }
    comparison(settings, gatewayPerCallSecond: gatewayPerCallSecond, setups: setups, proxy: proxy)
}

/// A parleyd with its SIP gateway on loopback, routing `pbx.test` and the trunk to `sipp`,
/// its application allowed SIP addresses and `+46` numbers without practical caps.
private func gatewayServer(to sipp: SIPpProcess) throws -> ServerUnderTest {
    try ServerUnderTest(
        extraArguments: ["--sip-listen", "127.0.0.1:0", "--sip-route", "\(GatewayDestination.domain)=\(sipp.address)",
                         "--sip-trunk", "sip:\(sipp.address);transport=udp"],
        applicationSettings: [["set-dialling", "--sip", "on", "--allow-prefix", "+46", "--max-concurrent", "100000", "--max-per-minute", "10000"],
                              ["set-cli", "+46700000001"]])
}

/// The SIPp uas (echoing RTP) and parleyd of a gateway row, or why they did not start.
private func startGateway(_ settings: SIPBenchSettings, _ name: String) -> (sipp: SIPpProcess, server: ServerUnderTest, directory: String)? {
    do {
        let directory = try makeBenchDirectory("parley-bench-sip-\(name)")
        let sipp = try SIPpProcess.uas(echo: true, directory: directory)
        do {
            return (sipp, try gatewayServer(to: sipp), directory)
        } catch {
            sipp.stop()
            throw error
        }
    } catch {
        say("  not run: \(error)")
        return nil
    }
}

private func finish(_ directory: String, _ settings: SIPBenchSettings) {
    if settings.keep { say("  files kept in \(directory)") } else { try? FileManager.default.removeItem(atPath: directory) }
}

/// The gateway row; returns parleyd's ms of CPU per call-second at the highest step that passed.
private func gatewayRow(_ settings: SIPBenchSettings) -> Double? {
    say("")
    say("Concurrent app-to-SIP calls through the gateway, each step held \(settings.holdSeconds) s. Each call: an app device (WebSocket,")
    say("ICE, DTLS-SRTP, a 440 Hz tone as Opus) calls \(settings.destination.label) -> parleyd transcodes Opus 48 kHz <-> PCMU 8 kHz")
    say("-> SIPp uas echoes the RTP -> parleyd -> the app. rx/s = packets the app legs received per call-second (50 when all")
    say("comes back); srv pkt/s = parleyd's parley_media_packets_received_total per call-second (both legs: ~100); jitter =")
    say("the app legs' interarrival jitter (parleyd exports no gateway tick lateness); concealed = app frames played from")
    say("concealment (jitter and concealed also grow when the bench's own legs run late). Stops after a step with failed")
    say("set-ups, loss over 1 %, under 95 % back, or the bench short of CPU (its app legs encode and decode Opus too):")
    guard let (sipp, server, directory) = startGateway(settings, "gateway") else { return nil }
    defer {
        server.stop()
        sipp.stop()
        finish(directory, settings)
    }
    say("  calls  rx/s  loss %  sent %  concealed %  jitter ms  srv pkt/s  server cores  ms/call-s  calls/core  bench cores  sipp cores  machine")
    let results = runGatewaySteps(server: server, sipp: sipp, steps: settings.steps, holdSeconds: Double(settings.holdSeconds),
                                  destination: settings.destination) { step in
        say("  " + lpad("\(step.calls)", 5) + lpad(fixed(step.delivered * 50, 1), 6) + lpad(fixed(step.loss * 100, 2), 8)
            + lpad(fixed(step.sent * 100, 1), 8) + lpad(fixed(step.concealed * 100, 2), 13) + lpad(fixed(step.jitterMilliseconds, 2), 11)
            + lpad(step.serverPacketsPerCallSecond.map { fixed($0, 1) } ?? "-", 11) + lpad(fixed(step.serverCores, 2), 14)
            + lpad(fixed(step.serverMillisecondsPerCallSecond, 2), 11)
            + lpad(step.serverMillisecondsPerCallSecond > 0 ? "\(Int(1000 / step.serverMillisecondsPerCallSecond))" : "-", 12)
            + lpad(fixed(step.benchCores, 2), 13) + lpad(fixed(step.sippCores, 2), 12) + lpad(fixed(step.machineCores, 2), 9)
            + ((step.serverPacketsDropped ?? 0) > 0 ? "  parleyd dropped \(Int(step.serverPacketsDropped ?? 0))" : "")
            + (step.setupFailures > 0 ? "   \(step.setupFailures) set-ups failed: \(step.firstFailure ?? "?")" : ""))
    }
    guard let last = results.last else {
        say("  not run: cannot start the device event loops")
        return nil
    }
    let within = results.filter(\.passed).last
    say("  highest step that passed: \(within.map { "\($0.calls) calls" } ?? "none"); stopped: \(last.stopReason ?? "last step reached")")
    if let within, within.serverMillisecondsPerCallSecond > 0 {
        say("  parleyd: \(fixed(within.serverMillisecondsPerCallSecond, 2)) ms of CPU per call-second above its idle \(fixed(within.serverIdleCores, 3)) cores,"
            + " so one core would carry about \(Int(1000 / within.serverMillisecondsPerCallSecond)) transcoded calls (an extrapolation from \(within.calls) calls)")
    }
    say("  " + settings.command("gateway"))
    return within.map(\.serverMillisecondsPerCallSecond)
}

/// The setups row: one pass of calls hung up as soon as they are established, one of calls
/// held `PARLEY_SIP_SETUP_HOLD_MS`; nil when it could not run.
private func setupsRow(_ settings: SIPBenchSettings) -> (short: GatewaySetupRun, held: GatewaySetupRun)? {
    let hold = Double(settings.setupHoldMs) / 1000
    say("")
    say("Short app-to-SIP calls through the gateway: \(settings.setupCallers) app devices place \(settings.setupRate) calls/s together for \(settings.setupSeconds) s,")
    say("each call.start .. call.established, then call.hangup (BYE) .. call.ended; once hung up at once, once held \(fixed(hold, 1)) s. parleyd's")
    say("CPU per call covers the app's WebSocket signaling, its leg's ICE-lite and DTLS-SRTP handshake, the INVITE/ACK/BYE")
    say("transactions, the call's SQLite records, the info log, and the hold's transcoding:")
    guard let (sipp, server, directory) = startGateway(settings, "setups") else { return nil }
    defer {
        server.stop()
        sipp.stop()
        finish(directory, settings)
    }
    var runs: [GatewaySetupRun] = []
    for passHold in [0, hold] {
        let run = runGatewaySetups(server: server, sipp: sipp, callers: settings.setupCallers, rate: Double(settings.setupRate),
                                   seconds: Double(settings.setupSeconds), holdSeconds: passHold, destination: settings.destination)
        runs.append(run)
        say("  held \(fixed(passHold, 1)) s: \(run.calls) calls in \(fixed(run.callingSeconds, 1)) s (\(fixed(Double(run.calls) / max(run.callingSeconds, 1e-3), 1)) calls/s),"
            + " parleyd \(fixed(run.serverSecondsPerCall * 1e3, 2)) ms of CPU per call above idle (\(fixed(run.serverCPUSeconds / max(run.wallSeconds, 1e-3), 2)) cores);"
            + " SIPp \(fixed(run.sippCPUSeconds / max(run.wallSeconds, 1e-3), 2)), bench \(fixed(run.benchCPUSeconds / max(run.wallSeconds, 1e-3), 2)) cores")
        say("    busiest parleyd threads (cores): \(run.serverThreads); call.start -> call.answered p50 \(fixed(quantile(run.startToAnswered, 0.5) * 1e3, 1)) ms,"
            + " p99 \(fixed(quantile(run.startToAnswered, 0.99) * 1e3, 1)) ms; -> call.established p50 \(fixed(quantile(run.startToEstablished, 0.5) * 1e3, 1)) ms,"
            + " p99 \(fixed(quantile(run.startToEstablished, 0.99) * 1e3, 1)) ms")
        if run.failures > 0 { say("    FAILURES: \(run.failures); first: \(run.firstFailure ?? "?")") }
    }
    if hold > 0 {
        say("  the hold's media: (\(fixed(runs[1].serverSecondsPerCall * 1e3, 2)) - \(fixed(runs[0].serverSecondsPerCall * 1e3, 2))) / \(fixed(hold, 1)) s ="
            + " \(fixed((runs[1].serverSecondsPerCall - runs[0].serverSecondsPerCall) / hold * 1e3, 2)) ms per call-second at this handful of calls")
    }
    say("  " + settings.command("setups"))
    return (runs[0], runs[1])
}

private func proxyRow(_ settings: SIPBenchSettings) -> [ProxyStep] {
    say("")
    say("Kamailio as a stateful proxy (scripts/bench/kamailio-proxy.cfg: tm, sl, rr, maxfwd; record_route, t_relay; UDP workers:")
    say("\(settings.proxyWorkers); memory manager \(settings.proxyAllocator)) between a SIPp uac and a SIPp uas, their built-in scenarios, calls of 0 s,")
    say("\(settings.proxySeconds) s per rate. CPU per call = Kamailio's CPU from the first INVITE to \(proxyQuietSeconds) s after the last call (tm frees")
    say("transactions after its 5 s wait timer), less its idle; retrans = retransmissions by the uac and the uas:")
    let directory: String, uas: SIPpProcess, kamailio: KamailioProxy
    do {
        directory = try makeBenchDirectory("parley-bench-sip-proxy")
        uas = try SIPpProcess.uas(echo: false, directory: directory)
        do {
            kamailio = try KamailioProxy(uas: uas.address, workers: settings.proxyWorkers, allocator: settings.proxyAllocator, directory: directory)
        } catch {
            uas.stop()
            throw error
        }
    } catch {
        say("  not run: \(error)")
        return []
    }
    defer {
        kamailio.stop()
        uas.stop()
        finish(directory, settings)
    }
    say("   rate  calls    ok  failed  retrans  achieved/s  INVITE->200 ms  us/call  kamailio cores  uac cores  uas cores  machine")
    let results = runProxySteps(kamailio: kamailio, uas: uas, rates: settings.rates, seconds: settings.proxySeconds, directory: directory) { step in
        say("  " + lpad("\(step.targetRate)", 5) + lpad("\(step.placed)", 7) + lpad("\(step.successful)", 6) + lpad("\(step.failed)", 8)
            + lpad("\(step.retransmissions)", 9) + lpad(fixed(step.achievedRate, 0), 12) + lpad(step.responseTime.map { fixed($0 * 1e3, 2) } ?? "-", 16)
            + lpad(fixed(step.proxySecondsPerCall * 1e6, 0), 9) + lpad(fixed(step.proxyCores, 2), 16) + lpad(fixed(step.uacCores, 2), 11)
            + lpad(fixed(step.uasCores, 2), 11) + lpad(fixed(step.machineCores, 2), 9) + (step.failure.map { "  \($0)" } ?? ""))
    }
    if let first = results.first { say("  Kamailio with no traffic: \(fixed(first.proxyIdleCores, 3)) cores (taken off)") }
    let clean = results.filter(\.clean).last
    say("  highest rate with no failed call and no retransmission: \(clean.map { "\($0.targetRate) calls/s (\(fixed($0.achievedRate, 0)) reached)" } ?? "none")")
    say("  " + settings.command("proxy"))
    return results
}

/// parleyd bridging a SIPp uac's calls to a SIPp uas, at rising rates, as the proxy row
/// runs Kamailio.
private func bridgeRow(_ settings: SIPBenchSettings) {
    say("")
    say("parleyd bridging SIP to SIP: a SIPp uac calls +\(BridgingServer.number), whose --sip-number rule bridges it to bob@pbx.test, routed")
    say("to a SIPp uas (built-in scenarios, calls of 0 s, PCMU offered; the built-in uac sends no RTP, so both plain RTP legs are")
    say("made, negotiated and closed but carry nothing). \(settings.bridgeSeconds) s per rate. CPU per call = parleyd's CPU from the")
    say("first INVITE to \(proxyQuietSeconds) s after the last call, less its idle; retrans = retransmissions by the uac and the uas:")
    let directory: String, uas: SIPpProcess, bridge: BridgingServer
    do {
        directory = try makeBenchDirectory("parley-bench-sip-bridge")
        uas = try SIPpProcess.uas(echo: false, directory: directory)
        do { bridge = try BridgingServer(uas: uas) } catch {
            uas.stop()
            throw error
        }
    } catch {
        say("  not run: \(error)")
        return
    }
    defer {
        bridge.stop()
        uas.stop()
        finish(directory, settings)
    }
    say("   rate  calls    ok  failed  retrans  achieved/s  INVITE->200 ms  us/call  parleyd cores  uac cores  uas cores  machine")
    let results = runProxySteps(kamailio: bridge, uas: uas, rates: settings.bridgeRates, seconds: settings.bridgeSeconds, directory: directory) { step in
        say("  " + lpad("\(step.targetRate)", 5) + lpad("\(step.placed)", 7) + lpad("\(step.successful)", 6) + lpad("\(step.failed)", 8)
            + lpad("\(step.retransmissions)", 9) + lpad(fixed(step.achievedRate, 0), 12) + lpad(step.responseTime.map { fixed($0 * 1e3, 2) } ?? "-", 16)
            + lpad(fixed(step.proxySecondsPerCall * 1e6, 0), 9) + lpad(fixed(step.proxyCores, 2), 15) + lpad(fixed(step.uacCores, 2), 11)
            + lpad(fixed(step.uasCores, 2), 11) + lpad(fixed(step.machineCores, 2), 9) + (step.failure.map { "  \($0)" } ?? ""))
    }
    if let first = results.first { say("  parleyd with no traffic: \(fixed(first.proxyIdleCores, 3)) cores (taken off)") }
    let clean = results.filter(\.clean).last
    say("  highest rate with no failed call and no retransmission: \(clean.map { "\($0.targetRate) calls/s (\(fixed($0.achievedRate, 0)) reached)" } ?? "none")")
    say("  " + settings.command("bridge"))
}

/// parleyd's figures beside Kamailio's, from the rows of this run.
private func comparison(_ settings: SIPBenchSettings, gatewayPerCallSecond: Double?, setups: (short: GatewaySetupRun, held: GatewaySetupRun)?,
                        proxy: [ProxyStep]) {
    let clean = proxy.filter { $0.clean && $0.proxySecondsPerCall.isFinite }
    guard let setups, setups.short.calls > 0, let lowest = clean.first, let highest = clean.last else { return }
    let perCall = setups.short.serverSecondsPerCall
    say("")
    say("parleyd beside Kamailio (this run). Not the same work: a parleyd call is a back-to-back user agent's whole call")
    say("(the app's WebSocket signaling, ICE-lite and DTLS-SRTP on its leg, a SIP user agent's INVITE/ACK/BYE, a plain RTP leg,")
    say("codecs, SQLite records, logs); a Kamailio call is a proxy relaying 6 SIP messages statefully (and sending a 100), no")
    say("media, no records. Both are calls hung up at once.")
    say("  Kamailio per call: \(fixed(lowest.proxySecondsPerCall * 1e6, 0)) us at \(lowest.targetRate) calls/s, \(fixed(highest.proxySecondsPerCall * 1e6, 0)) us"
        + " at \(highest.targetRate) calls/s (its highest clean rate here)")
    if highest.targetRate > lowest.targetRate {
        // What one more call per second costs, without what its timers cost at any rate.
        let slope = (highest.proxySecondsPerCall * Double(highest.targetRate) - lowest.proxySecondsPerCall * Double(lowest.targetRate))
            / Double(highest.targetRate - lowest.targetRate)
        say("  Kamailio's marginal cost between those rates: \(fixed(slope * 1e6, 0)) us per call")
    }
    say("  parleyd per call set up and torn down at \(settings.setupRate) calls/s: \(fixed(perCall * 1e6, 0)) us ="
        + " \(fixed(perCall / highest.proxySecondsPerCall, 1))x Kamailio's at \(highest.targetRate) calls/s, \(fixed(perCall / lowest.proxySecondsPerCall, 1))x at \(lowest.targetRate)")
    say("  per core: Kamailio about \(Int(1 / highest.proxySecondsPerCall)) proxied calls/s; parleyd about \(Int(1 / max(perCall, 1e-9))) gateway calls set up"
        + " and torn down per second" + (gatewayPerCallSecond.map { ", or about \(Int(1000 / $0)) transcoded calls held at once" } ?? ""))
}
