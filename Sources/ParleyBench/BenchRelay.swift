import Glibc
import ParleyNetCore
import ParleyNetLinux
import ParleySRTP

// The relay forwarding benchmark (issue 3): CPU per forwarded packet of parleyd's relay path
// (`ParleyBench relay-serve`: a RelayBridge of two forward-mode legs per call, a socket per
// leg, on one media loop, in place) against rtpengine in userspace, on loopback, the same
// 172-byte SRTP streams through both. Each relay runs as its own process and its
// CPU (user + system, every thread) is read from /proc/<pid>/stat before and after the load.
//
// rtpengine only decrypts and re-encrypts when the two sides' SDES parameters differ: with
// the same suite it hands the offerer's key to the answerer and passes SRTP through
// untouched. So its answerer picks another suite than the offerer's AES_CM_128_HMAC_SHA1_80:
// AES_CM_128_HMAC_SHA1_32 (the same AES-CM and HMAC-SHA1 work, a 4-byte tag) or
// AEAD_AES_128_GCM. The pass-through row shows what skipping the crypto saves.
//
// Two load shapes: saturated (a window of packets in flight, as fast as the relay forwards)
// and real time (many streams at 50 packets per second each, as calls send).
// Environment: PARLEY_RELAY_STREAMS (saturated, default 20), PARLEY_RELAY_PACKETS (per stream,
// default 4000), PARLEY_RELAY_WINDOW (in flight, default 8 per stream), PARLEY_RELAY_PACED_STREAMS
// (real time, default 200; 0 skips it), PARLEY_RELAY_PACED_SECONDS (default 3),
// PARLEY_RELAY_REPEATS (runs per configuration, default 3, median shown), RTPENGINE (path),
// PARLEY_RELAY_DEBUG (print missing packets per stream), PARLEY_RELAY_RTPENGINE_LOG (file prefix
// for rtpengine's debug log).

private struct RelayRun {
    let relay: String
    let cipher: String
    let load: RelayLoadResult
    let cpuSeconds: Double
    let checked: String
    var microsecondsPerPacket: Double { load.received > 0 ? cpuSeconds / Double(load.received) * 1e6 : .nan }
}

private struct RelayFailure: Error, CustomStringConvertible {
    let description: String
}

private func environmentInt(_ name: String, _ fallback: Int, _ range: ClosedRange<Int>) -> Int {
    guard let text = getenv(name), let value = Int(String(cString: text)), range.contains(value) else { return fallback }
    return value
}

/// One load shape: how many streams, how many packets each, how fast.
private struct RelayScenario {
    let title: String
    let streams: Int
    let packetsPerStream: Int
    let pace: RelayPace
}

/// Runs every configuration and returns the tables for `make bench`.
func relayComparisonReport() -> String {
    let streams = environmentInt("PARLEY_RELAY_STREAMS", 20, 1...500)
    let packets = environmentInt("PARLEY_RELAY_PACKETS", 4_000, 100...65_535)
    // About 8 packets of each stream in flight: rtpengine reads at most 50 packets per socket
    // per wake-up and starts discarding a stream's packets when its queue stays longer.
    let window = environmentInt("PARLEY_RELAY_WINDOW", min(4096, 8 * streams), 1...4096)
    let pacedStreams = environmentInt("PARLEY_RELAY_PACED_STREAMS", 200, 0...1000)
    let pacedSeconds = environmentInt("PARLEY_RELAY_PACED_SECONDS", 3, 1...60)
    let repeats = environmentInt("PARLEY_RELAY_REPEATS", 3, 1...20)
    var scenarios = [RelayScenario(
        title: "saturated: \(streams) streams x \(packets) packets, \(window) in flight (as fast as the relay forwards)",
        streams: streams, packetsPerStream: packets, pace: .window(window))]
    if pacedStreams > 0 {
        scenarios.append(RelayScenario(
            title: "real time: \(pacedStreams) streams x 50 packets/s (20 ms Opus), \(pacedSeconds) s, \(pacedStreams * 50) packets/s in all",
            streams: pacedStreams, packetsPerStream: 50 * pacedSeconds, pace: .rate(Double(pacedStreams * 50))))
    }
    let rtpengine = getenv("RTPENGINE").map { String(cString: $0) } ?? "/usr/bin/rtpengine"
    let haveRtpengine = access(rtpengine, X_OK) == 0
    var lines: [String] = []
    lines.append("")
    lines.append("Relay forwarding on loopback, \(relayPacketSize)-byte SRTP packets (Opus-sized): receive, authenticate+decrypt, re-encrypt, send.")
    lines.append("CPU = user+system of the relay process (all threads) from /proc/<pid>/stat; forwarded = arrived at the receiver;")
    lines.append("median of \(repeats) runs, ours and rtpengine's alternating.")
    if !haveRtpengine {
        lines.append("rtpengine not found at \(rtpengine) (make bench installs Debian rtpengine-daemon): parley rows only")
    }
    for scenario in scenarios {
        lines.append(scenario.title)
        lines += relayScenarioTable(scenario, rtpengine: haveRtpengine ? rtpengine : nil, repeats: repeats)
    }
    lines.append("reproduce: swift run -c release ParleyBench relay   (env PARLEY_RELAY_STREAMS, _PACKETS, _WINDOW, _PACED_STREAMS, _PACED_SECONDS, _REPEATS)")
    return lines.joined(separator: "\n")
}

private func relayScenarioTable(_ scenario: RelayScenario, rtpengine: String?, repeats: Int) -> [String] {
    var lines: [String] = []
    let wallLimit = 20.0
    do {
        let sockets = try RelayLoadSockets(streams: scenario.streams)
        let cm = try RelayStreamLoad(profile: .aes128CmHmacSha1_80, streams: scenario.streams, packetsPerStream: scenario.packetsPerStream, seed: 1)
        let gcm = try RelayStreamLoad(profile: .aeadAes128Gcm, streams: scenario.streams, packetsPerStream: scenario.packetsPerStream, seed: 2)
        let pace = scenario.pace
        // Ours and rtpengine's alternate, and every configuration runs `repeats` times in
        // rounds, so that a noisy neighbour on the machine hits both alike; rows show the median.
        var configurations: [(name: String, run: () throws -> RelayRun)] = [
            ("parley CM", { try parleyRun(cm, out: .aes128CmHmacSha1_80, sockets: sockets, pace: pace, wallLimit: wallLimit) }),
        ]
        if let rtpengine {
            configurations.append(("rtpengine CM->CM32", { try rtpengineRun(cm, answerSuite: "AES_CM_128_HMAC_SHA1_32", path: rtpengine, sockets: sockets, pace: pace, wallLimit: wallLimit) }))
        }
        configurations.append(("parley CM->GCM", { try parleyRun(cm, out: .aeadAes128Gcm, sockets: sockets, pace: pace, wallLimit: wallLimit) }))
        if let rtpengine {
            configurations.append(("rtpengine CM->GCM", { try rtpengineRun(cm, answerSuite: "AEAD_AES_128_GCM", path: rtpengine, sockets: sockets, pace: pace, wallLimit: wallLimit) }))
        }
        configurations.append(("parley GCM", { try parleyRun(gcm, out: .aeadAes128Gcm, sockets: sockets, pace: pace, wallLimit: wallLimit) }))
        if let rtpengine {
            // Same suite both sides: rtpengine reuses the offerer's key and skips the crypto.
            configurations.append(("rtpengine pass-through", { try rtpengineRun(cm, answerSuite: "AES_CM_128_HMAC_SHA1_80", path: rtpengine, sockets: sockets, pace: pace, wallLimit: wallLimit) }))
        }
        var results = [[RelayRun]](repeating: [], count: configurations.count)
        for _ in 0..<repeats {
            for (index, configuration) in configurations.enumerated() {
                do { results[index].append(try configuration.run()) } catch { lines.append("  \(configuration.name): failed: \(error)") }
            }
        }
        lines.append(pad("relay", 11) + pad("SRTP in -> out", 30) + lpad("sent", 8) + lpad("forwarded", 10) + lpad("loss", 7)
            + lpad("CPU s", 7) + lpad("µs/pkt", 8) + lpad("(range)", 14) + lpad("pkts/CPU-s", 11) + lpad("pkts/s wall", 12) + "  output checked")
        var medians: [String: Double] = [:]
        for runs in results where !runs.isEmpty {
            let sorted = runs.sorted { $0.microsecondsPerPacket < $1.microsecondsPerPacket }
            let run = sorted[sorted.count / 2]
            medians[run.relay + " " + run.cipher] = run.microsecondsPerPacket
            let loss = run.load.sent > 0 ? Double(run.load.sent - run.load.received) / Double(run.load.sent) * 100 : 0
            let range = sorted.count > 1 ? "\(format(sorted.first!.microsecondsPerPacket, 1))-\(format(sorted.last!.microsecondsPerPacket, 1))" : ""
            lines.append(pad(run.relay, 11) + pad(run.cipher, 30) + lpad("\(run.load.sent)", 8) + lpad("\(run.load.received)", 10)
                + lpad(format(loss, 2) + "%", 7) + lpad(format(run.cpuSeconds, 2), 7) + lpad(format(run.microsecondsPerPacket, 2), 8)
                + lpad(range, 14) + lpad("\(Int(Double(run.load.received) / max(run.cpuSeconds, 1e-9)))", 11)
                + lpad("\(Int(Double(run.load.received) / max(run.load.wallSeconds, 1e-9)))", 12) + "  " + run.checked)
        }
        func ratio(_ theirs: String, _ ours: String) -> String? {
            guard let t = medians[theirs], let o = medians[ours] else { return nil }
            return format(t / o, 2) + "x"
        }
        if let r = ratio("rtpengine AES_CM_80 -> AES_CM_32", "parley AES_CM_80 -> AES_CM_80") {
            lines.append("ratio rtpengine/parley, CPU per packet, AES-CM + HMAC-SHA1 both sides: \(r)")
        }
        if let r = ratio("rtpengine AES_CM_80 -> GCM", "parley AES_CM_80 -> GCM") {
            lines.append("ratio rtpengine/parley, CPU per packet, AES-CM in, AES-GCM out:        \(r)")
        }
        if let r = ratio("rtpengine AES_CM_80 -> AES_CM_32", "parley GCM -> GCM") {
            lines.append("ratio rtpengine AES-CM both sides / parley AES-GCM both sides (what WebRTC legs negotiate): \(r)")
        }
    } catch {
        lines.append("  setup failed: \(error)")
    }
    return lines
}

private func format(_ value: Double, _ decimals: Int) -> String {
    guard value.isFinite else { return "-" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = Int((value * scale).rounded())
    let whole = scaled / Int(scale), fraction = abs(scaled % Int(scale))
    guard decimals > 0 else { return "\(whole)" }
    let digits = String(fraction)
    return "\(scaled < 0 && whole == 0 ? "-" : "")\(whole).\(String(repeating: "0", count: decimals - digits.count))\(digits)"
}

private func suiteName(_ profile: SRTPProfile) -> String {
    profile == .aes128CmHmacSha1_80 ? "AES_CM_80" : "GCM"
}

private func checkSummary(_ load: RelayLoadResult, _ check: RelayReceiveCheck) -> String {
    var parts: [String] = []
    parts.append(load.rightLength == load.received ? "all \(check.expectedLength) B" : "\(load.received - load.rightLength) of wrong length")
    parts.append(load.recrypted == load.received ? "all re-encrypted" : "\(load.recrypted) re-encrypted")
    if check.validators != nil { parts.append("\(load.validated) decrypted ok, \(load.validationFailures) bad") }
    if load.other > 0 { parts.append("\(load.other) other datagrams") }
    return parts.joined(separator: ", ")
}

/// Our relay: a `relay-serve` child with one route per stream.
private func parleyRun(_ load: RelayStreamLoad, out profile: SRTPProfile, sockets: RelayLoadSockets,
                       pace: RelayPace, wallLimit: Double) throws -> RelayRun {
    guard let executable = currentExecutablePath() else { throw RelayFailure(description: "cannot find own executable") }
    let child = try ChildProcess(path: executable, arguments: ["relay-serve"], pipeStdin: true, pipeStdout: true)
    defer { child.terminate() }
    var generator = BenchRandom(seed: 99)
    let outKeys = (0..<load.streams).map { _ in generator.bytes(profile.keyMaterialLength) }
    var commands = ""
    for stream in 0..<load.streams {
        commands += "route \(sockets.senders[stream].localAddress) \(load.profile.rawValue) \(hexString(load.keys[stream])) "
            + "\(sockets.receiver.localAddress) \(profile.rawValue) \(hexString(outKeys[stream]))\n"
    }
    child.write(commands + "go\n")
    guard let line = child.readLine(timeoutMs: 10_000), line.hasPrefix("ports ") else {
        throw RelayFailure(description: "relay-serve did not start")
    }
    let ports = line.dropFirst(6).split(separator: " ").compactMap { UInt16($0) }
    guard ports.count == load.streams else { throw RelayFailure(description: "relay-serve: \(line)") }
    let check = RelayReceiveCheck(
        expectedLength: relayPacketSize - load.profile.rtpTagLength + profile.rtpTagLength,
        validators: try outKeys.map { try SRTPSession(profile: profile, keyMaterial: $0, direction: .inbound) })
    sockets.drain()
    guard let cpuBefore = child.cpuSeconds() else { throw RelayFailure(description: "cannot read /proc/\(child.pid)/stat") }
    let result = runRelayLoad(load, sockets: sockets, targets: ports.map { SocketAddress.ipv4Loopback(port: $0) },
                              pace: pace, wallLimit: wallLimit, check: check)
    guard let cpuAfter = child.cpuSeconds() else { throw RelayFailure(description: "cannot read /proc/\(child.pid)/stat") }
    child.write("stop\n")
    let counters = child.readLine(timeoutMs: 2000) ?? "no counters"
    child.waitExit(timeoutMs: 2000)
    var summary = checkSummary(result, check)
    if !counters.contains("authFailures=0 replays=0 malformed=0") { summary += "; relay: \(counters)" }
    return RelayRun(relay: "parley", cipher: "\(suiteName(load.profile)) -> \(suiteName(profile))",
                    load: result, cpuSeconds: cpuAfter - cpuBefore, checked: summary)
}

/// rtpengine in userspace: a fresh daemon, one call per stream set up over ng (offer from
/// the stream's sender, answer from the common receiver), then the same load.
private func rtpengineRun(_ load: RelayStreamLoad, answerSuite: String, path: String, sockets: RelayLoadSockets,
                          pace: RelayPace, wallLimit: Double) throws -> RelayRun {
    let ngPort: UInt16 = try {
        let probe = try UDPSocket(bindingTo: .ipv4Loopback(port: 0))
        defer { probe.close() }
        return probe.localAddress.port
    }()
    // PARLEY_RELAY_RTPENGINE_LOG=file: rtpengine's debug log there, to see why it drops.
    let logPath = getenv("PARLEY_RELAY_RTPENGINE_LOG").map { String(cString: $0) + "." + answerSuite }
    let child = try ChildProcess(path: path, arguments: [
        "--config-file=none", "--table=-1", "--no-fallback", "--foreground", "--log-stderr", "--log-level=3",
        "--interface=127.0.0.1", "--listen-ng=127.0.0.1:\(ngPort)", "--port-min=41000", "--port-max=44999",
    ] + (logPath == nil ? [] : ["--log-level=7"]), pipeStdin: false, pipeStdout: false, stderrPath: logPath ?? "/dev/null")
    defer { child.terminate() }
    let ng = try NGClient(server: .ipv4Loopback(port: ngPort))
    var ready = false
    for _ in 0..<50 where !ready {
        if (try? ng.call(["command": .string("ping")], timeoutMs: 100))?["result"]?.text == "pong" { ready = true }
    }
    guard ready else { throw RelayFailure(description: "rtpengine did not answer ng ping on port \(ngPort)") }

    var targets: [SocketAddress] = []
    var validators: [SRTPSession] = []
    var generator = BenchRandom(seed: 7)
    let noSecurityExtras: [String: Bencode] = ["DTLS": .string("off"), "ICE": .string("remove")]
    for stream in 0..<load.streams {
        let callID = "parley-bench-\(stream)"
        var offer = noSecurityExtras
        offer["command"] = .string("offer")
        offer["call-id"] = .string(callID)
        offer["from-tag"] = .string("a\(stream)")
        offer["sdp"] = .string(sdesAudioSDP(port: sockets.senders[stream].localAddress.port, cryptoTag: 1,
                                            suite: "AES_CM_128_HMAC_SHA1_80", key: load.keys[stream]))
        guard let offered = try ng.call(offer)["sdp"]?.text,
              let line = sdpCryptoLines(offered).first(where: { $0.suite == answerSuite }) else {
            throw RelayFailure(description: "rtpengine's offer has no \(answerSuite) crypto line")
        }
        if answerSuite == "AEAD_AES_128_GCM" {
            validators.append(try SRTPSession(profile: .aeadAes128Gcm, keyMaterial: line.key, direction: .inbound))
        } else if answerSuite == "AES_CM_128_HMAC_SHA1_80" {
            validators.append(try SRTPSession(profile: .aes128CmHmacSha1_80, keyMaterial: line.key, direction: .inbound))
        }
        var answer = noSecurityExtras
        answer["command"] = .string("answer")
        answer["call-id"] = .string(callID)
        answer["from-tag"] = .string("a\(stream)")
        answer["to-tag"] = .string("b\(stream)")
        answer["sdp"] = .string(sdesAudioSDP(port: sockets.receiver.localAddress.port, cryptoTag: line.tag,
                                             suite: answerSuite, key: generator.bytes(line.key.count)))
        guard let answered = try ng.call(answer)["sdp"]?.text, let port = sdpAudioPort(answered) else {
            throw RelayFailure(description: "rtpengine's answer has no audio port")
        }
        targets.append(.ipv4Loopback(port: port))
    }
    let tag = answerSuite == "AEAD_AES_128_GCM" ? 16 : answerSuite == "AES_CM_128_HMAC_SHA1_32" ? 4 : 10
    let check = RelayReceiveCheck(expectedLength: relayPacketSize - load.profile.rtpTagLength + tag,
                                  validators: validators.isEmpty ? nil : validators)
    sockets.drain()
    guard let cpuBefore = child.cpuSeconds() else { throw RelayFailure(description: "cannot read /proc/\(child.pid)/stat") }
    let result = runRelayLoad(load, sockets: sockets, targets: targets, pace: pace, wallLimit: wallLimit, check: check)
    guard let cpuAfter = child.cpuSeconds() else { throw RelayFailure(description: "cannot read /proc/\(child.pid)/stat") }
    for stream in 0..<load.streams {
        _ = try? ng.call(["command": .string("delete"), "call-id": .string("parley-bench-\(stream)"),
                          "from-tag": .string("a\(stream)")], timeoutMs: 200)
    }
    let cipher = answerSuite == "AES_CM_128_HMAC_SHA1_80" ? "AES_CM_80 passed through"
        : answerSuite == "AEAD_AES_128_GCM" ? "AES_CM_80 -> GCM" : "AES_CM_80 -> AES_CM_32"
    return RelayRun(relay: "rtpengine", cipher: cipher, load: result, cpuSeconds: cpuAfter - cpuBefore,
                    checked: checkSummary(result, check))
}
