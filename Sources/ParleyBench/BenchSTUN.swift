/// Placeholder until the STUN wire format lands.
func stunBenchmarks() -> [Benchmark] { [] }
