import ParleyRTP

/// RFC 2198 RED: parse; a payload that parses must serialize to the input and re-parse
/// equal, and its size must be what `serializedSize` says.
func fuzzRED(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    guard let payload = try? RedundantAudioPayload(parsing: bytes) else { return }
    guard let again = try? payload.serialized(), again == bytes else {
        fatalError("RED round trip changed the bytes: \(bytes) -> \(String(describing: try? payload.serialized()))")
    }
    guard payload.serializedSize == bytes.count else { fatalError("RED serializedSize is wrong") }
    guard (try? RedundantAudioPayload(parsing: again)) == payload else { fatalError("RED re-parse differs") }
}
