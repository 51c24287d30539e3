#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A RIFF/WAVE file holding 16-bit linear PCM, mono or stereo.
///
/// ```
/// "RIFF" size:u32le "WAVE"
///   "fmt " 16:u32le  format=1:u16 channels:u16 rate:u32 byteRate:u32 blockAlign:u16 bits=16:u16
///   ...other chunks (LIST, fact, ...) are skipped...
///   "data" size:u32le  samples:i16le interleaved
/// ```
/// Every chunk is padded to an even length. `WAVE_FORMAT_EXTENSIBLE` (0xFFFE) with the PCM
/// sub-format is read as PCM. Writing always produces the plain 44-byte-header form.
public struct WAVFile: Sendable, Hashable {
    /// Samples per second per channel (1000...384000; 8, 16, 32 and 48 kHz are typical).
    public var sampleRate: Int
    /// 1 or 2.
    public var channels: Int
    /// Interleaved samples.
    public var samples: [Int16]

    /// A WAV file of the given samples.
    public init(sampleRate: Int, channels: Int = 1, samples: [Int16]) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.samples = samples
    }

    /// The whole file as one audio frame.
    public var audioFrame: AudioFrame { AudioFrame(samples: samples, sampleRate: sampleRate, channels: channels) }

    private static let supportedRates = 1000...384_000
    /// The size of the header `serialized()` and `header(sampleRate:channels:dataBytes:)` write.
    public static let headerBytes = 44

    // MARK: Parsing

    /// Parses a complete WAV file.
    ///
    /// - Throws: `CodecError`: `.truncated` when a chunk runs past the end, `.invalidLength`
    ///   for inconsistent sizes (RIFF size beyond the file, data not a whole number of
    ///   sample frames, wrong block align or byte rate), `.malformed` for a missing RIFF/WAVE
    ///   tag or a missing/duplicate fmt or data chunk, `.unsupportedFormat` for anything
    ///   other than 16-bit PCM with 1 or 2 channels.
    public init(parsing bytes: [UInt8]) throws(CodecError) {
        var reader = LittleEndianReader(bytes)
        guard bytes.count >= 12 else {
            throw CodecError(.truncated, offset: 0, "WAV RIFF header", "need 12 bytes, \(bytes.count) left")
        }
        guard try reader.tag() == "RIFF" else {
            throw CodecError(.malformed, offset: 0, "WAV RIFF header", "file does not start with RIFF")
        }
        let riffSize = Int(try reader.uint32("WAV RIFF header"))
        guard try reader.tag() == "WAVE" else {
            throw CodecError(.malformed, offset: 8, "WAV RIFF header", "form type is not WAVE")
        }
        guard riffSize >= 4, riffSize <= bytes.count - 8 else {
            throw CodecError(.invalidLength, offset: 4, "WAV RIFF header",
                             "RIFF size \(riffSize) but the file has \(bytes.count - 8) bytes after it")
        }
        let end = 8 + riffSize

        var format: (channels: Int, rate: Int)?
        var data: ArraySlice<UInt8>?
        var dataOffset = 0
        while end - reader.offset >= 8 {
            let chunkOffset = reader.offset
            let id = try reader.tag()
            let size = Int(try reader.uint32("WAV chunk header"))
            guard size <= end - reader.offset else {
                throw CodecError(.truncated, offset: chunkOffset, "WAV '\(id)' chunk",
                                 "size \(size) but \(end - reader.offset) bytes left")
            }
            let bodyOffset = reader.offset
            let body = bytes[bodyOffset..<(bodyOffset + size)]
            switch id {
            case "fmt ":
                guard format == nil else {
                    throw CodecError(.malformed, offset: chunkOffset, "WAV fmt chunk", "second fmt chunk")
                }
                format = try WAVFile.parseFormat(body, offset: bodyOffset)
            case "data":
                guard data == nil else {
                    throw CodecError(.malformed, offset: chunkOffset, "WAV data chunk", "second data chunk")
                }
                data = body
                dataOffset = bodyOffset
            default:
                break  // LIST, fact, cue, ... carry nothing we need
            }
            // A pad byte follows an odd-sized chunk; tolerate it missing at the very end.
            reader.offset = min(end, bodyOffset + size + (size & 1))
        }
        guard let format else {
            throw CodecError(.malformed, offset: 12, "WAV file", "no fmt chunk")
        }
        guard let data else {
            throw CodecError(.malformed, offset: 12, "WAV file", "no data chunk")
        }
        let blockAlign = format.channels * 2
        guard data.count % blockAlign == 0 else {
            throw CodecError(.invalidLength, offset: dataOffset, "WAV data chunk",
                             "\(data.count) bytes is not a whole number of \(blockAlign)-byte sample frames")
        }
        var samples = [Int16](repeating: 0, count: data.count / 2)
        var index = data.startIndex
        for n in 0..<samples.count {
            samples[n] = Int16(bitPattern: UInt16(data[index]) | UInt16(data[index + 1]) << 8)
            index += 2
        }
        self.init(sampleRate: format.rate, channels: format.channels, samples: samples)
    }

    private static func parseFormat(_ body: ArraySlice<UInt8>, offset: Int) throws(CodecError) -> (channels: Int, rate: Int) {
        var reader = LittleEndianReader(Array(body), base: offset)
        let context = "WAV fmt chunk"
        guard body.count >= 16 else {
            throw CodecError(.truncated, offset: offset, context, "need 16 bytes, \(body.count) present")
        }
        var formatTag = try reader.uint16(context)
        let channels = Int(try reader.uint16(context))
        let rate = Int(try reader.uint32(context))
        let byteRate = Int(try reader.uint32(context))
        let blockAlign = Int(try reader.uint16(context))
        let bits = Int(try reader.uint16(context))
        if formatTag == 0xFFFE {
            // WAVE_FORMAT_EXTENSIBLE: cbSize, validBits, channelMask, then the sub-format GUID
            // whose first two bytes are the plain format tag.
            guard body.count >= 40 else {
                throw CodecError(.truncated, offset: offset, context, "extensible format needs 40 bytes, \(body.count) present")
            }
            reader.offset = offset + 24
            formatTag = try reader.uint16(context)
        }
        guard formatTag == 1 else {
            throw CodecError(.unsupportedFormat, offset: offset, context, "format tag \(formatTag) is not PCM (1)")
        }
        guard bits == 16 else {
            throw CodecError(.unsupportedFormat, offset: offset + 14, context, "\(bits) bits per sample; only 16 is supported")
        }
        guard channels == 1 || channels == 2 else {
            throw CodecError(.unsupportedFormat, offset: offset + 2, context, "\(channels) channels; only 1 or 2 are supported")
        }
        guard supportedRates.contains(rate) else {
            throw CodecError(.unsupportedFormat, offset: offset + 4, context, "sample rate \(rate) Hz is outside 1000...384000")
        }
        guard blockAlign == channels * 2 else {
            throw CodecError(.invalidLength, offset: offset + 12, context, "block align \(blockAlign), expected \(channels * 2)")
        }
        guard byteRate == rate * blockAlign else {
            throw CodecError(.invalidLength, offset: offset + 8, context, "byte rate \(byteRate), expected \(rate * blockAlign)")
        }
        return (channels, rate)
    }

    // MARK: Writing

    /// The file's bytes: a 44-byte header and the samples, little-endian.
    /// - Throws: `CodecError` `.invalidArgument` for an unsupported channel count or rate,
    ///   samples not a multiple of `channels`, or more than 4 GiB of data.
    public func serialized() throws(CodecError) -> [UInt8] {
        guard channels == 1 || channels == 2 else {
            throw CodecError(.invalidArgument, "WAV writer", "\(channels) channels; only 1 or 2 are supported")
        }
        guard samples.count % channels == 0 else {
            throw CodecError(.invalidArgument, "WAV writer", "\(samples.count) samples is not a multiple of \(channels) channels")
        }
        var out = try WAVFile.header(sampleRate: sampleRate, channels: channels, dataBytes: samples.count * 2)
        out.reserveCapacity(WAVFile.headerBytes + samples.count * 2)
        for sample in samples { out.appendLittleEndian(UInt16(bitPattern: sample)) }
        return out
    }

    /// The 44-byte header of a file whose `data` chunk holds `dataBytes` bytes of 16-bit
    /// samples, for a writer that streams the samples after it and writes the header again
    /// with the final size (the RIFF size is at byte 4, the data size at byte 40).
    /// - Throws: `CodecError` `.invalidArgument` for an unsupported channel count or rate,
    ///   a size that is not whole sample frames, or more than 4 GiB of data.
    public static func header(sampleRate: Int, channels: Int, dataBytes: Int) throws(CodecError) -> [UInt8] {
        guard channels == 1 || channels == 2 else {
            throw CodecError(.invalidArgument, "WAV writer", "\(channels) channels; only 1 or 2 are supported")
        }
        guard supportedRates.contains(sampleRate) else {
            throw CodecError(.invalidArgument, "WAV writer", "sample rate \(sampleRate) Hz is outside 1000...384000")
        }
        guard dataBytes >= 0, dataBytes % (channels * 2) == 0 else {
            throw CodecError(.invalidArgument, "WAV writer", "\(dataBytes) bytes is not a whole number of \(channels * 2)-byte sample frames")
        }
        guard dataBytes <= maximumDataBytes else {
            throw CodecError(.invalidArgument, "WAV writer", "\(dataBytes) bytes of samples exceed the RIFF 4 GiB limit")
        }
        var out: [UInt8] = []
        out.reserveCapacity(headerBytes)
        out += Array("RIFF".utf8)
        out.appendLittleEndian(UInt32(36 + dataBytes))
        out += Array("WAVEfmt ".utf8)
        out.appendLittleEndian(UInt32(16))
        out.appendLittleEndian(UInt16(1))
        out.appendLittleEndian(UInt16(channels))
        out.appendLittleEndian(UInt32(sampleRate))
        out.appendLittleEndian(UInt32(sampleRate * channels * 2))
        out.appendLittleEndian(UInt16(channels * 2))
        out.appendLittleEndian(UInt16(16))
        out += Array("data".utf8)
        out.appendLittleEndian(UInt32(dataBytes))
        return out
    }

    /// The most sample bytes a RIFF file can say it holds (its sizes are 32-bit).
    public static let maximumDataBytes = Int(UInt32.max) - 36

    // MARK: Files

    /// Reads and parses the WAV file at `path` (at most 1 GiB).
    /// - Throws: `CodecError` `.fileError` if the file cannot be read, else as `init(parsing:)`.
    public static func read(path: String) throws(CodecError) -> WAVFile {
        try WAVFile(parsing: try readFile(path))
    }

    /// Writes the file to `path`, replacing any file there.
    /// - Throws: `CodecError` `.fileError` if the file cannot be written.
    public func write(path: String) throws(CodecError) {
        try WAVFile.writeFile(path, try serialized())
    }

    private static let maxFileBytes = 1 << 30

    private static func readFile(_ path: String) throws(CodecError) -> [UInt8] {
        guard let file = fopen(path, "rb") else {
            throw CodecError(.fileError, "reading \(path)", String(cString: strerror(errno)))
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if count > 0 { bytes += chunk[0..<count] }
            guard bytes.count <= maxFileBytes else {
                throw CodecError(.fileError, "reading \(path)", "file is larger than 1 GiB")
            }
            if count < chunk.count {
                if ferror(file) != 0 {
                    throw CodecError(.fileError, "reading \(path)", String(cString: strerror(errno)))
                }
                return bytes
            }
        }
    }

    private static func writeFile(_ path: String, _ bytes: [UInt8]) throws(CodecError) {
        guard let file = fopen(path, "wb") else {
            throw CodecError(.fileError, "writing \(path)", String(cString: strerror(errno)))
        }
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        let closed = fclose(file)
        guard written == bytes.count, closed == 0 else {
            throw CodecError(.fileError, "writing \(path)", String(cString: strerror(errno)))
        }
    }
}

/// Bounds-checked little-endian reads for RIFF (ParleyWireCore's ByteReader is big-endian).
private struct LittleEndianReader {
    let bytes: [UInt8]
    /// Offset of `bytes[0]` in the whole input, for error positions.
    let base: Int
    /// Current position, in whole-input offsets.
    var offset: Int

    init(_ bytes: [UInt8], base: Int = 0) {
        self.bytes = bytes
        self.base = base
        self.offset = base
    }

    private mutating func take(_ count: Int, _ context: String) throws(CodecError) -> ArraySlice<UInt8> {
        let start = offset - base
        guard start >= 0, count <= bytes.count - start else {
            throw CodecError(.truncated, offset: offset, context, "need \(count) bytes, \(max(0, bytes.count - start)) left")
        }
        offset += count
        return bytes[start..<(start + count)]
    }

    mutating func tag() throws(CodecError) -> String {
        let raw = try take(4, "WAV chunk header")
        return String(decoding: raw.map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }

    mutating func uint16(_ context: String) throws(CodecError) -> UInt16 {
        let raw = try take(2, context)
        return UInt16(raw[raw.startIndex]) | UInt16(raw[raw.startIndex + 1]) << 8
    }

    mutating func uint32(_ context: String) throws(CodecError) -> UInt32 {
        let raw = try take(4, context)
        var value: UInt32 = 0
        for (shift, byte) in zip([0, 8, 16, 24], raw) { value |= UInt32(byte) << UInt32(shift) }
        return value
    }
}

extension [UInt8] {
    fileprivate mutating func appendLittleEndian(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    fileprivate mutating func appendLittleEndian(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
}
