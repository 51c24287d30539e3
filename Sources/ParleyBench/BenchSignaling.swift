/// Placeholder until the Signaling wire format lands.
func signalingBenchmarks() -> [Benchmark] { [] }
