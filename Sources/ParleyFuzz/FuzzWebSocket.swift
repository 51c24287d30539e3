/// Placeholder until the WebSocket parser lands.
func fuzzWebSocket(_ input: UnsafeRawBufferPointer) {}
