/// Placeholder until the WebSocket wire format lands.
func webSocketBenchmarks() -> [Benchmark] { [] }
