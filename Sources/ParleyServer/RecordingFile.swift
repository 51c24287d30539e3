import Glibc
import ParleyMediaCore

/// A WAV file written while it grows (a call's recording, docs/backend.md "Recording"):
/// created new (never over an existing file), its 44-byte header first, samples appended,
/// and the header's two sizes (RIFF at byte 4, data at byte 40) rewritten after every
/// append. So the file on disk is a valid WAV of everything appended so far at any moment:
/// a parleyd killed mid-call (SIGKILL, a crash) leaves a readable file that lacks only
/// what had not been appended yet.
///
/// Blocking I/O: used on a recording writer's queue only, never on a media or engine thread.
final class RecordingFile {
    /// Why the file could not be made or written.
    struct Failure: Error, CustomStringConvertible, Equatable {
        var description: String
        /// The file was not created because one of that name exists.
        var exists = false
    }

    let path: String
    let sampleRate: Int
    let channels: Int
    /// Bytes of samples appended so far.
    private(set) var dataBytes = 0
    private var descriptor: Int32

    /// Creates the file at `path` (mode 0640) and writes its header.
    /// - Throws: `Failure` when the file exists already, its directory is missing or not
    ///   writable, or the format is not one a WAV file holds.
    init(creating path: String, sampleRate: Int, channels: Int) throws(Failure) {
        let header: [UInt8]
        do { header = try WAVFile.header(sampleRate: sampleRate, channels: channels, dataBytes: 0) } catch {
            throw Failure(description: "\(path): \(error)")
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o640)
        guard descriptor >= 0 else {
            let error = errno
            throw Failure(description: "creating \(path): \(String(cString: strerror(error)))", exists: error == EEXIST)
        }
        self.path = path
        self.sampleRate = sampleRate
        self.channels = channels
        self.descriptor = descriptor
        do throws(Failure) { try Self.write(header, to: descriptor, at: nil, path: path) } catch {
            Glibc.close(descriptor)
            unlink(path)
            self.descriptor = -1
            throw error
        }
    }

    deinit {
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    /// Appends interleaved samples (a whole number of sample frames) and rewrites the
    /// header's sizes to include them.
    /// - Throws: `Failure` when the file is closed, the samples are not whole frames, the
    ///   data would pass the 4 GiB a WAV file can say it holds, or the write fails (a full
    ///   disk): what was appended before stays valid.
    func append(_ samples: [Int16]) throws(Failure) {
        guard descriptor >= 0 else { throw Failure(description: "\(path) is closed") }
        guard samples.count % channels == 0 else {
            throw Failure(description: "\(samples.count) samples are not whole frames of \(channels) channels")
        }
        let bytes = samples.count * 2
        guard dataBytes + bytes <= WAVFile.maximumDataBytes else {
            throw Failure(description: "\(path) reached the 4 GiB a WAV file can hold")
        }
        guard bytes > 0 else { return }
        var data = [UInt8](repeating: 0, count: bytes)
        for (index, sample) in samples.enumerated() {
            let bits = UInt16(bitPattern: sample)
            data[2 * index] = UInt8(truncatingIfNeeded: bits)
            data[2 * index + 1] = UInt8(truncatingIfNeeded: bits >> 8)
        }
        try Self.write(data, to: descriptor, at: nil, path: path)
        dataBytes += bytes
        try writeSizes()
    }

    /// Closes the file (its header already says its final sizes). Closing twice does nothing.
    func close() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
    }

    /// Seconds of audio appended so far.
    var seconds: Double { Double(dataBytes) / Double(2 * channels * sampleRate) }

    // MARK: Writing

    private func writeSizes() throws(Failure) {
        try Self.write(Self.littleEndian(UInt32(36 + dataBytes)), to: descriptor, at: 4, path: path)
        try Self.write(Self.littleEndian(UInt32(dataBytes)), to: descriptor, at: 40, path: path)
    }

    private static func littleEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8),
         UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 24)]
    }

    /// Writes all of `bytes`, at the file's end (`offset` nil) or at `offset`, through
    /// short writes and interruptions.
    private static func write(_ bytes: [UInt8], to descriptor: Int32, at offset: Int?, path: String) throws(Failure) {
        var done = 0
        while done < bytes.count {
            let written = bytes.withUnsafeBytes { buffer -> Int in
                let start = buffer.baseAddress! + done
                if let offset { return pwrite(descriptor, start, bytes.count - done, off_t(offset + done)) }
                return Glibc.write(descriptor, start, bytes.count - done)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "writing \(path): \(String(cString: strerror(errno)))")
            }
            guard written > 0 else { throw Failure(description: "writing \(path): no progress") }
            done += written
        }
    }
}
