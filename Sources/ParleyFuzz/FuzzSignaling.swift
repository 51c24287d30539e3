/// Placeholder until the signaling decoder lands.
func fuzzSignaling(_ input: UnsafeRawBufferPointer) {}
