/// Placeholders until the RTP/RTCP parsers land.
func fuzzRTP(_ input: UnsafeRawBufferPointer) {}
func fuzzRTCP(_ input: UnsafeRawBufferPointer) {}
