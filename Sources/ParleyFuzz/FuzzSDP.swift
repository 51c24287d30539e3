/// Placeholder until the SDP parser lands.
func fuzzSDP(_ input: UnsafeRawBufferPointer) {}
