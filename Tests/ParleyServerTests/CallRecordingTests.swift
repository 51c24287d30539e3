import Dispatch
import Foundation
import ParleyMediaCore
import Synchronization
import Testing

@testable import ParleyServer

/// A call's recording off the media thread (docs/backend.md, "Recording"): ticks in, a
/// stereo 16 kHz WAV out with each direction on its side; the bounded buffer (a stalled
/// writer costs silence, not memory); the file valid while it grows (what a killed
/// parleyd leaves); names kept inside the directory; bad directories refused cleanly.
@Suite struct CallRecordingTests {
    /// A scratch directory, removed by the caller.
    static func scratch() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parley-recording-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func tone(_ frequency: Double, ticks: Int) -> [[Int16]] {
        var generator = ToneGenerator(frequency: frequency, amplitude: 0.3, sampleRate: 48_000)
        return (0..<ticks).map { _ in generator.next(count: 960) }
    }

    /// Starts a recording on `writer`, runs `body` with it, finishes it and waits (bounded)
    /// for its outcome.
    static func record(callID: String = "c-1", in directory: String, writer: DispatchQueue = DispatchQueue(label: "test.recording"),
                       _ body: (CallRecording) -> Void) throws -> CallRecording.Outcome {
        let outcome = Mutex<CallRecording.Outcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        let recording = CallRecording(callID: callID, directory: directory, writer: writer) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        body(recording)
        recording.finish()
        recording.finish()  // a second finish does nothing
        guard done.wait(timeout: .now() + 10) == .success else { throw RecordingTestFailure.noOutcome }
        return try #require(outcome.withLock { $0 })
    }

    enum RecordingTestFailure: Error { case noOutcome }

    static func channel(_ wav: WAVFile, _ index: Int) -> [Int16] {
        stride(from: index, to: wav.samples.count, by: 2).map { wav.samples[$0] }
    }

    @Test func ticksBecomeAStereoWAVWithTheCallerOnTheLeft() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let callerTone = Self.tone(440, ticks: 150)
        let otherTone = Self.tone(1000, ticks: 150)
        let outcome = try Self.record(in: directory) { recording in
            for (caller, other) in zip(callerTone, otherTone) { recording.record(caller: caller, other: other) }
        }
        #expect(outcome.failure == nil && outcome.droppedTicks == 0, "\(outcome)")
        #expect(outcome.path == directory + "/c-1.wav")
        #expect(abs(outcome.seconds - 3) < 0.001, "\(outcome.seconds)")
        let wav = try WAVFile.read(path: try #require(outcome.path))
        #expect(wav.sampleRate == 16_000 && wav.channels == 2)
        #expect(wav.samples.count == 150 * 320 * 2)
        let left = Self.channel(wav, 0), right = Self.channel(wav, 1)
        #expect(abs((FrequencyAnalysis.dominantFrequency(samples: left, sampleRate: 16_000) ?? 0) - 440) < 5)
        #expect(abs((FrequencyAnalysis.dominantFrequency(samples: right, sampleRate: 16_000) ?? 0) - 1000) < 5)
        // Each side holds its own tone only: the other's is far below it.
        #expect(FrequencyAnalysis.toneLevelDBFS(samples: Array(left.suffix(8000)), sampleRate: 16_000, frequency: 1000) < -60)
        #expect(FrequencyAnalysis.toneLevelDBFS(samples: Array(right.suffix(8000)), sampleRate: 16_000, frequency: 440) < -60)
        let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/c-1.wav")
        #expect((attributes[.posixPermissions] as? Int) == 0o640)
    }

    /// A writer that cannot keep up (its queue suspended): the buffer keeps 250 ticks, the
    /// rest are counted and written as silence after them, so the file keeps its length.
    @Test func aStalledWriterCostsSilenceNotMemory() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let writer = DispatchQueue(label: "test.recording.stalled")
        writer.suspend()
        let ticks = Self.tone(440, ticks: 300)
        let outcome = try Self.record(in: directory, writer: writer) { recording in
            for tick in ticks { recording.record(caller: tick, other: tick) }
            writer.resume()
        }
        #expect(outcome.failure == nil)
        #expect(outcome.droppedTicks == 300 - CallRecording.maximumBufferedTicks)
        let wav = try WAVFile.read(path: try #require(outcome.path))
        #expect(wav.samples.count == 300 * 320 * 2)
        let left = Self.channel(wav, 0)
        // The kept ticks carry the tone; the dropped ones (the last 50) are silence.
        #expect(FrequencyAnalysis.toneLevelDBFS(samples: Array(left[(200 * 320)..<(240 * 320)]), sampleRate: 16_000, frequency: 440) > -20)
        #expect(left.suffix(50 * 320).allSatisfy { $0 == 0 })
    }

    /// The file is a valid WAV after every append, closed or not: what a parleyd killed
    /// mid-call leaves behind.
    @Test func theFileIsValidWhileItGrows() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/growing.wav"
        let file = try RecordingFile(creating: path, sampleRate: 16_000, channels: 2)
        #expect(try WAVFile.read(path: path).samples.isEmpty)
        try file.append([Int16](repeating: 1000, count: 640))
        #expect(try WAVFile.read(path: path).samples.count == 640)
        try file.append([Int16](repeating: -1000, count: 6400))
        let read = try WAVFile.read(path: path)
        #expect(read.samples.count == 7040 && read.samples.last == -1000 && read.channels == 2)
        #expect(abs(file.seconds - 0.22) < 0.0001)
        // Half a frame is refused; what was written stays.
        #expect(throws: RecordingFile.Failure.self) { try file.append([1]) }
        file.close()
        #expect(throws: RecordingFile.Failure.self) { try file.append([1, 2]) }
        #expect(try WAVFile.read(path: path).samples.count == 7040)
        // Never over an existing file.
        #expect(throws: RecordingFile.Failure.self) { _ = try RecordingFile(creating: path, sampleRate: 16_000, channels: 2) }
        #expect(try WAVFile.read(path: path).samples.count == 7040)
    }

    /// A call's second recording gets `-2`; a call id with path characters stays inside
    /// the directory.
    @Test func namesStayInTheDirectoryAndNeverOverwrite() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try Self.record(in: directory) { _ in }
        let second = try Self.record(in: directory) { _ in }
        #expect(first.path == directory + "/c-1.wav" && second.path == directory + "/c-1-2.wav", "\(first) \(second)")
        #expect(try WAVFile.read(path: try #require(second.path)).samples.isEmpty)
        let odd = try Self.record(callID: "../../etc/passwd", in: directory) { _ in }
        #expect(odd.path == directory + "/______etc_passwd.wav", "\(odd)")
        #expect(CallRecording.fileName(callID: "", index: 1) == "call.wav")
        #expect(CallRecording.fileName(callID: "a b/é", index: 3) == "a_b__-3.wav")
    }

    /// A directory gone since the start: the recording reports why, makes no file, and
    /// the ticks handed to it are dropped without harm.
    @Test func aMissingDirectoryFailsTheRecordingCleanly() throws {
        let outcome = try Self.record(in: "/nonexistent/parley-recordings") { recording in
            for tick in Self.tone(440, ticks: 30) { recording.record(caller: tick, other: tick) }
        }
        #expect(outcome.path == nil)
        #expect(outcome.failure?.contains("No such file or directory") == true, "\(outcome)")
    }

    /// A recording cancelled (its call's media could not be recorded): its file is
    /// removed, and the outcome says why.
    @Test func aCancelledRecordingLeavesNoFile() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let outcome = Mutex<CallRecording.Outcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        let recording = CallRecording(callID: "c-9", directory: directory, writer: DispatchQueue(label: "test.cancel")) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        recording.record(caller: [Int16](repeating: 0, count: 960), other: [Int16](repeating: 0, count: 960))
        recording.cancel("relayed")
        recording.finish()  // after a cancel, nothing
        #expect(done.wait(timeout: .now() + 10) == .success)
        let result = try #require(outcome.withLock { $0 })
        #expect(result.cancelled && result.failure == "relayed" && result.path == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }

    @Test func theDirectoryIsCheckedAtTheStart() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try CallRecordings.resolveDirectory(directory + "/./") == directory)
        #expect(throws: RecordingDirectoryError.self) { _ = try CallRecordings.resolveDirectory(directory + "/missing") }
        #expect(FileManager.default.createFile(atPath: directory + "/file", contents: Data()))
        #expect(throws: RecordingDirectoryError.self) { _ = try CallRecordings.resolveDirectory(directory + "/file") }
    }

    @Test func theNotifyNamesTheFileAsAFileURL() {
        #expect(CallRecordings.fileURL(of: "/var/lib/parley/rec/c-1.wav") == "file:///var/lib/parley/rec/c-1.wav")
        #expect(CallRecordings.fileURL(of: "/tmp/a b/%é.wav") == "file:///tmp/a%20b/%25%C3%A9.wav")
    }
}
