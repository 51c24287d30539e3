import ParleyMediaCore
import ParleyTestSupport
import Testing

@Suite("WAV files")
struct WAVFileTests {
    /// A hand-built 8 kHz mono file with three samples.
    private let minimal: [UInt8] = Array("RIFF".utf8) + [42, 0, 0, 0] + Array("WAVEfmt ".utf8)
        + [16, 0, 0, 0, 1, 0, 1, 0, 0x40, 0x1F, 0, 0, 0x80, 0x3E, 0, 0, 2, 0, 16, 0]
        + Array("data".utf8) + [6, 0, 0, 0, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x80]

    @Test("parses a minimal hand-built file")
    func minimalFile() throws {
        let file = try WAVFile(parsing: minimal)
        #expect(file == WAVFile(sampleRate: 8000, channels: 1, samples: [1, -1, Int16.min]))
        #expect(try file.serialized() == minimal)
    }

    @Test("round trips mono and stereo at 8, 16, 32 and 48 kHz", arguments: [8000, 16000, 32000, 48000])
    func roundTrip(rate: Int) throws {
        var random = SeededGenerator(seed: UInt64(rate))
        for channels in [1, 2] {
            let samples = (0..<(rate / 50 * channels)).map { _ in Int16(truncatingIfNeeded: random.next()) }
            let file = WAVFile(sampleRate: rate, channels: channels, samples: samples)
            let bytes = try file.serialized()
            #expect(bytes.count == 44 + samples.count * 2)
            #expect(try WAVFile(parsing: bytes) == file)
        }
    }

    @Test("skips LIST and other unknown chunks, including odd-sized ones with a pad byte")
    func unknownChunks() throws {
        let list = Array("LIST".utf8) + [5, 0, 0, 0] + Array("INFOx".utf8) + [0]  // odd size + pad
        let fact = Array("fact".utf8) + [4, 0, 0, 0, 3, 0, 0, 0]
        var bytes = Array(minimal[0..<12]) + list + Array(minimal[12..<36]) + fact + Array(minimal[36...])
        let riffSize = UInt32(bytes.count - 8)
        for i in 0..<4 { bytes[4 + i] = UInt8(truncatingIfNeeded: riffSize >> (8 * UInt32(i))) }
        let file = try WAVFile(parsing: bytes)
        #expect(file.samples == [1, -1, Int16.min])
    }

    @Test("reads WAVE_FORMAT_EXTENSIBLE with the PCM sub-format")
    func extensible() throws {
        var fmt: [UInt8] = [0xFE, 0xFF, 1, 0, 0x80, 0xBB, 0, 0, 0x00, 0x77, 1, 0, 2, 0, 16, 0]
        fmt += [22, 0, 16, 0, 4, 0, 0, 0]  // cbSize, valid bits, channel mask
        fmt += [1, 0, 0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71]  // KSDATAFORMAT_SUBTYPE_PCM
        let body = Array("WAVE".utf8) + Array("fmt ".utf8) + [40, 0, 0, 0] + fmt + Array("data".utf8) + [2, 0, 0, 0, 7, 0]
        let bytes = Array("RIFF".utf8) + [UInt8(body.count), 0, 0, 0] + body
        let file = try WAVFile(parsing: bytes)
        #expect(file.sampleRate == 48000 && file.channels == 1 && file.samples == [7])
    }

    @Test("every truncation throws a typed error")
    func truncations() throws {
        let full = try WAVFile(sampleRate: 16000, channels: 2, samples: [1, 2, 3, 4]).serialized()
        for length in 0..<full.count {
            #expect(throws: CodecError.self) { try WAVFile(parsing: Array(full[0..<length])) }
        }
    }

    @Test("hostile headers throw the right kind", arguments: [
        (4, [0xFF, 0xFF, 0xFF, 0xFF], "invalidLength"),  // absurd RIFF size
        (40, [0xF0, 0xFF, 0xFF, 0x7F], "truncated"),     // absurd data size
        (16, [0xFF, 0xFF, 0xFF, 0xFF], "truncated"),     // absurd fmt size
        (16, [8, 0, 0, 0], "truncated"),                 // fmt too short
        (20, [3, 0], "unsupportedFormat"),               // IEEE float
        (20, [6, 0], "unsupportedFormat"),               // A-law in WAV
        (22, [3, 0], "unsupportedFormat"),               // three channels
        (24, [0, 0, 0, 0], "unsupportedFormat"),         // 0 Hz
        (34, [8, 0], "unsupportedFormat"),               // 8-bit
        (32, [3, 0], "invalidLength"),                   // block align
        (28, [1, 0, 0, 0], "invalidLength"),             // byte rate
        (40, [9, 0, 0, 0], "truncated"),                 // data runs past RIFF end by one
        (40, [3, 0, 0, 0], "invalidLength"),             // data not whole samples
        (0, Array("RIFX".utf8), "malformed"),
        (8, Array("AVI ".utf8), "malformed"),
        (12, Array("junk".utf8), "malformed"),           // fmt renamed: no fmt chunk
        (36, Array("junk".utf8), "malformed"),           // data renamed: no data chunk
    ] as [(Int, [UInt8], String)])
    func hostile(offset: Int, patch: [UInt8], kind: String) throws {
        var bytes = try WAVFile(sampleRate: 8000, channels: 1, samples: [1, 2, 3, 4]).serialized()
        bytes.replaceSubrange(offset..<(offset + patch.count), with: patch)
        let error = try #require(throws: CodecError.self) { try WAVFile(parsing: bytes) }
        #expect(error.kind.description == kind, "\(error)")
        #expect(!error.description.isEmpty)
    }

    @Test("odd data size and duplicate chunks are refused")
    func structural() throws {
        var odd = try WAVFile(sampleRate: 8000, channels: 2, samples: [1, 2, 3, 4]).serialized()
        odd[40] = 6  // 6 bytes: one and a half stereo frames
        let error = try #require(throws: CodecError.self) { try WAVFile(parsing: odd + [0]) }
        #expect(error.kind == .invalidLength || error.kind == .truncated)

        let base = try WAVFile(sampleRate: 8000, channels: 1, samples: [1]).serialized()
        var twice = Array(base[0..<36]) + Array(base[36...]) + Array(base[36...])
        twice[4] = UInt8(twice.count - 8)
        #expect { try WAVFile(parsing: twice) } throws: { ($0 as? CodecError)?.kind == .malformed }
    }

    @Test("the error message names the place")
    func errorDescription() throws {
        var bytes = try WAVFile(sampleRate: 8000, channels: 1, samples: [1, 2]).serialized()
        bytes[40] = 200
        let error = try #require(throws: CodecError.self) { try WAVFile(parsing: bytes) }
        #expect(error.description == "truncated WAV 'data' chunk at offset 36: size 200 but 4 bytes left")
        #expect(error.offset == 36)
    }

    @Test("random bytes and random mutations never trap")
    func randomInput() throws {
        var random = SeededGenerator(seed: 0x3A7E)
        let valid = try WAVFile(sampleRate: 48000, channels: 2, samples: [1, 2, 3, 4, 5, 6]).serialized()
        for round in 0..<5000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = Array("RIFF".utf8) + random.bytes(random.below(80))
            } else {
                bytes = valid
                for _ in 0..<(1 + random.below(4)) { bytes[random.below(bytes.count)] = random.byte() }
            }
            _ = try? WAVFile(parsing: bytes)
        }
    }

    @Test("writer refuses what it cannot represent")
    func writerErrors() {
        #expect { try WAVFile(sampleRate: 8000, channels: 3, samples: []).serialized() } throws: { ($0 as? CodecError)?.kind == .invalidArgument }
        #expect { try WAVFile(sampleRate: 8000, channels: 2, samples: [1]).serialized() } throws: { ($0 as? CodecError)?.kind == .invalidArgument }
        #expect { try WAVFile(sampleRate: 0, channels: 1, samples: []).serialized() } throws: { ($0 as? CodecError)?.kind == .invalidArgument }
    }

    @Test("file helpers write and read back; a missing file is a fileError")
    func files() throws {
        let path = "/tmp/parley-wav-test-\(UInt32.random(in: 0...UInt32.max)).wav"
        let file = WAVFile(sampleRate: 16000, channels: 1, samples: (0..<320).map { Int16($0) })
        try file.write(path: path)
        #expect(try WAVFile.read(path: path) == file)
        #expect { try WAVFile.read(path: "/nonexistent/parley.wav") } throws: { ($0 as? CodecError)?.kind == .fileError }
        #expect { try file.write(path: "/nonexistent/dir/parley.wav") } throws: { ($0 as? CodecError)?.kind == .fileError }
    }
}
