// Throughput of the wire formats, crypto, codecs, jitter buffer and UDP engine, one core.
// Run: `make bench` or `swift run -c release ParleyBench [stun|rtp|rtcp|sdp|ws|signaling ...] [--seconds S]`.

// Our relay as a child process of the `relay` comparison (BenchRelayServe.swift).
if CommandLine.arguments.dropFirst().first == "relay-serve" { runRelayServeAndExit() }

var seconds = 1.0
var speechCalls = 3
var onlyMixer: ConferenceMixerKind?
var wanted: Set<String> = []
var args = CommandLine.arguments.dropFirst()
while let arg = args.popFirst() {
    if arg == "--seconds", let value = args.popFirst(), let s = Double(value) {
        seconds = s
    } else if arg == "--calls", let value = args.popFirst(), let n = Int(value), n > 0 {
        speechCalls = n
    } else if arg == "--janus-only" {
        onlyMixer = .janus
    } else if arg == "--parley-only" {
        onlyMixer = .parley
    } else {
        wanted.insert(arg)
    }
}

let all: [Benchmark] = stunBenchmarks() + rtpBenchmarks() + sdpBenchmarks() + webSocketBenchmarks() + signalingBenchmarks()
    + dtlsBenchmarks() + srtpBenchmarks() + iceBenchmarks() + jitterBenchmarks()
    + codecBenchmarks() + udpBenchmarks() + storeBenchmarks() + callingBenchmarks() + authBenchmarks()
let selected = all.filter { wanted.isEmpty || wanted.contains($0.format.lowercased()) }

func pad(_ s: String, _ width: Int) -> String { s.count >= width ? s : s + String(repeating: " ", count: width - s.count) }
func lpad(_ s: String, _ width: Int) -> String { s.count >= width ? s : String(repeating: " ", count: width - s.count) + s }

print("Parley throughput, one core (CPU time of the benchmark thread), \(seconds) s per row")
print(pad("format", 10) + pad("operation", 42) + lpad("bytes", 7) + lpad("msgs/s", 14) + lpad("ns/msg", 10) + lpad("MB/s", 9))
for benchmark in selected {
    let result = run(benchmark, seconds: seconds)
    let mbps = result.messagesPerSecond * Double(benchmark.messageBytes) / 1e6
    print(pad(benchmark.format, 10) + pad(benchmark.operation, 42) + lpad("\(benchmark.messageBytes)", 7)
        + lpad(String(Int(result.messagesPerSecond)), 14) + lpad(String(Int(result.nanosecondsPerMessage)), 10)
        + lpad(String(Int(mbps)), 9))
}
// The loop-thread cost of a real EventLoop echo cannot be a Harness row (the work runs
// on the loop's own thread), so it is reported separately.
if wanted.isEmpty || wanted.contains("udp") { print(udpLoopEchoReport(seconds: seconds)) }
if wanted.isEmpty || wanted.contains("edge") { print(edgeEchoReport(seconds: seconds)) }
if wanted.isEmpty || wanted.contains("store") { print(storeDurabilityReport(seconds: seconds)) }
// Relay forwarding against rtpengine: child processes measured from /proc (BenchRelay.swift).
// parleyd's per-packet relay path in process (BenchRelayBridge.swift); `relay-path` runs it alone.
if wanted.isEmpty || wanted.contains("relay") || wanted.contains("relay-path") { print(relayBridgeReport(seconds: seconds)) }
if wanted.isEmpty || wanted.contains("relay") { print(relayComparisonReport()) }
// Call set-ups, idle devices and concurrent calls through a parleyd process (BenchServer.swift).
if wanted.isEmpty || wanted.contains("server") { printServerReport() }
// Push: the server's path to an offline callee's push, pushes/s to the emulator, push-to-ring (BenchPush.swift).
if wanted.isEmpty || wanted.contains("push") {
    print(pushPathReport())
    print(pushThroughputReport(seconds: max(seconds, 1)))
    print(pushToRingReport())
}
// parleyd's SIP gateway under app-to-SIP calls, and Kamailio as a proxy beside it (BenchSIP.swift).
if wanted.isEmpty || wanted.contains("sip") { printSIPReport() }
// Speech quality through parleyd and two softphones, with impairment (BenchSpeech.swift).
if wanted.isEmpty || wanted.contains("speech") { print(SpeechBench.report(calls: speechCalls)) }
// A conference room of plain-RTP participants: Janus's AudioBridge and parleyd's room, each
// measured from /proc on the same load (BenchConference.swift).
if wanted.isEmpty || wanted.contains("conference") { printConferenceReport(only: onlyMixer) }
let formats = wanted.isEmpty ? "" : " " + wanted.sorted().joined(separator: " ")
print("reproduce: swift run -c release ParleyBench\(formats) --seconds \(seconds)   (one format: name it, e.g. ParleyBench stun)")
