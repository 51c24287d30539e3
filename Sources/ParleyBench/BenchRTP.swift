/// Placeholder until the RTP wire format lands.
func rtpBenchmarks() -> [Benchmark] { [] }
