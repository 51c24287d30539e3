/// Placeholder until the STUN parser lands.
func fuzzSTUN(_ input: UnsafeRawBufferPointer) {}
