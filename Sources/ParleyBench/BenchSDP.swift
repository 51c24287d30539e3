/// Placeholder until the SDP wire format lands.
func sdpBenchmarks() -> [Benchmark] { [] }
