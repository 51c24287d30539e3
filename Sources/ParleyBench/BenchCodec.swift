import ParleyMediaCore
import ParleyOpus

/// Audio codec and resampler cost per 20 ms frame. A row's msgs/s is frames per CPU-second;
/// divided by 50 it is the number of real-time streams one core sustains.
func codecBenchmarks() -> [Benchmark] {
    // One second of a voiced, speech-like signal (harmonics of a gliding fundamental plus
    // a little noise), cycled frame by frame so the encoder never sees a static input.
    let speech = speechLikeSignal(sampleRate: 48000, count: 48000)
    let frames48k = stride(from: 0, to: speech.count, by: 960).map { Array(speech[$0..<($0 + 960)]) }
    let frames8k = frames48k.map { frame in stride(from: 0, to: 960, by: 6).map { frame[$0] } }

    let encoder = try! OpusEncoder(bitrate: 32000, complexity: 9, inbandFEC: true, packetLossPercent: 5)
    let packets = frames48k.map { try! encoder.encode($0) }
    let meanPacket = packets.reduce(0) { $0 + $1.count } / packets.count
    let decoder = try! OpusDecoder()
    let muLaw = frames8k.map { G711.muLaw(encoding: $0) }
    let aLaw = frames8k.map { G711.aLaw(encoding: $0) }
    var downsampler = try! Resampler(from: 48000, to: 8000)
    var upsampler = try! Resampler(from: 8000, to: 48000)
    var toWideband = try! Resampler(from: 48000, to: 16000)

    var index = 0
    func next() -> Int {
        index = index == 49 ? 0 : index + 1
        return index
    }
    return [
        Benchmark(format: "opus", operation: "encode 20 ms 48k mono, 32 kbps, cx 9, FEC", messageBytes: 1920) {
            benchmarkSink &+= try! encoder.encode(frames48k[next()]).count
        },
        Benchmark(format: "opus", operation: "decode 20 ms packet to 48k mono", messageBytes: meanPacket) {
            benchmarkSink &+= Int(try! decoder.decode(packets[next()])[100])
        },
        Benchmark(format: "opus", operation: "conceal lost 20 ms frame (PLC)", messageBytes: 0) {
            benchmarkSink &+= Int(try! decoder.decodeLost()[100])
            // Keep the decoder in normal state: real streams lose only some frames.
            benchmarkSink &+= Int(try! decoder.decode(packets[next()])[100])
        },
        Benchmark(format: "opus", operation: "recover lost frame from FEC + decode next", messageBytes: meanPacket) {
            let packet = packets[next()]
            benchmarkSink &+= Int(try! decoder.decodeFEC(nextPacket: packet)[100])
            benchmarkSink &+= Int(try! decoder.decode(packet)[100])
        },
        Benchmark(format: "g711", operation: "mu-law encode 160 samples (20 ms)", messageBytes: 320) {
            benchmarkSink &+= Int(G711.muLaw(encoding: frames8k[next()])[7])
        },
        Benchmark(format: "g711", operation: "mu-law decode 160 bytes (20 ms)", messageBytes: 160) {
            benchmarkSink &+= Int(G711.muLaw(decoding: muLaw[next()])[7])
        },
        Benchmark(format: "g711", operation: "A-law encode 160 samples (20 ms)", messageBytes: 320) {
            benchmarkSink &+= Int(G711.aLaw(encoding: frames8k[next()])[7])
        },
        Benchmark(format: "g711", operation: "A-law decode 160 bytes (20 ms)", messageBytes: 160) {
            benchmarkSink &+= Int(G711.aLaw(decoding: aLaw[next()])[7])
        },
        Benchmark(format: "resample", operation: "48k -> 8k, 20 ms (960 -> 160)", messageBytes: 1920) {
            benchmarkSink &+= Int(downsampler.process(frames48k[next()])[7])
        },
        Benchmark(format: "resample", operation: "8k -> 48k, 20 ms (160 -> 960)", messageBytes: 320) {
            benchmarkSink &+= Int(upsampler.process(frames8k[next()])[7])
        },
        Benchmark(format: "resample", operation: "48k -> 16k, 20 ms (960 -> 320)", messageBytes: 1920) {
            benchmarkSink &+= Int(toWideband.process(frames48k[next()])[7])
        },
    ]
}

private func speechLikeSignal(sampleRate: Int, count: Int) -> [Int16] {
    var harmonics = (1...10).map { ToneGenerator(frequency: 150 * Double($0), amplitude: 0.3 / Double($0), sampleRate: sampleRate) }
    var noise: UInt32 = 0x2545_F491
    var output = [Int16](repeating: 0, count: count)
    let frame = sampleRate / 50
    for start in stride(from: 0, to: count, by: frame) {
        // Glide the fundamental a little every frame, as a voice does.
        let f0 = 150 + 40 * Double((start / frame) % 10) / 10
        var mix = [Int](repeating: 0, count: frame)
        for h in harmonics.indices {
            harmonics[h].frequency = f0 * Double(h + 1)
            for (n, sample) in harmonics[h].next(count: frame).enumerated() { mix[n] += Int(sample) }
        }
        for n in 0..<frame where start + n < count {
            noise = noise &* 1_664_525 &+ 1_013_904_223
            output[start + n] = Int16(clamping: mix[n] + Int(noise >> 24) - 128)
        }
    }
    return output
}
