import ParleyMediaCore

/// WAV files come from users (`--play FILE.wav`): parse, and when that succeeds the
/// serialized form must parse back to the same audio.
func fuzzWAV(_ input: UnsafeRawBufferPointer) {
    guard let wav = try? WAVFile(parsing: Array(input)) else { return }
    guard let bytes = try? wav.serialized() else { return }
    guard let again = try? WAVFile(parsing: bytes) else {
        fatalError("serialized WAV does not parse back")
    }
    if again.samples != wav.samples || again.sampleRate != wav.sampleRate || again.channels != wav.channels {
        fatalError("WAV round trip changed the audio")
    }
}
