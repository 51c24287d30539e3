import Dispatch
import Glibc
import ParleyMediaCore
import ParleyMediaLegCore
import Synchronization

/// One recording of a call, from its `startRecording` to its `stopRecording` or the call's
/// end (docs/backend.md, "Recording"): a stereo 16-bit WAV file at 16 kHz, the caller on
/// the left channel and the other side (the callee, or the server's prompts) on the right.
///
/// The call's topology hands it each 20 ms tick on the media thread (`record`, as its
/// `CallRecordingSink`), which only appends the two frames to a buffer under a lock: no
/// file I/O and no waiting there. The buffer is bounded (`maximumBufferedTicks`); a tick
/// that finds it full is counted, not kept, and written as silence in its place, so the
/// file keeps the call's timeline. Every `ticksPerWrite` ticks the buffer goes to the
/// writer queue, which resamples each direction from 48 to 16 kHz, interleaves them and
/// appends them to the file (`RecordingFile`, whose header is valid after every append).
/// `finish` writes what is left, closes the file and hands the outcome to `finished`, on
/// the writer queue.
final class CallRecording: CallRecordingSink, @unchecked Sendable {
    // @unchecked: `pending` is behind a Mutex; `file`, `failure`, the resamplers and
    // `droppedTicks` are used on `writer` only; the rest is immutable.

    /// How a recording ended.
    struct Outcome: Sendable, Equatable {
        let callID: String
        /// The file, when one was made.
        let path: String?
        /// Seconds of audio in it.
        let seconds: Double
        /// Ticks the media thread could not hand over (the buffer was full): silence in the file.
        let droppedTicks: Int
        /// Why the file is missing or incomplete; nil when it holds the whole recording.
        let failure: String?
        /// `cancel` ended it: the call could not be recorded, and no file was kept.
        var cancelled = false
    }

    /// The file's format.
    static let sampleRate = 16_000
    static let channels = 2
    /// Ticks kept for the writer at most (5 s of the call, about 1.8 MiB).
    static let maximumBufferedTicks = 250
    /// Ticks gathered before they go to the writer (200 ms).
    static let ticksPerWrite = 10
    /// Recordings of one call at most (`{callID}.wav`, then `-2` to `-99`).
    static let maximumFilesPerCall = 99

    let callID: String
    private let directory: String
    private let writer: DispatchQueue
    private let finished: @Sendable (Outcome) -> Void

    private struct Pending {
        var ticks: [(caller: [Int16], other: [Int16])] = []
        /// Ticks refused since the last write (the buffer was full).
        var dropped = 0
        /// A write of the buffer is on the writer queue.
        var writeQueued = false
        /// `finish` ran: nothing more is taken.
        var finished = false
    }
    private let pending = Mutex(Pending())

    // The writer queue's.
    private var file: RecordingFile?
    private var failure: String?
    private var left: Resampler?
    private var right: Resampler?
    private var droppedTicks = 0

    /// Starts a recording of `callID` in `directory`: its file is created on `writer` at
    /// once (a failure then is reported by `finished`, and nothing is written).
    init(callID: String, directory: String, writer: DispatchQueue, finished: @escaping @Sendable (Outcome) -> Void) {
        self.callID = callID
        self.directory = directory
        self.writer = writer
        self.finished = finished
        left = Self.resampler
        right = Self.resampler
        writer.async { [self] in create() }
    }

    /// A fresh 48 to 16 kHz converter (its filter designed once; each copy keeps its own
    /// history). A ratio of 3:1, which the resampler takes: nil never happens in practice,
    /// and would fail every recording with `failure` rather than stop the server.
    private static let resamplerPrototype: Resampler? = try? Resampler(from: AudioPayloadCodec.interfaceRate, to: sampleRate)
    private static var resampler: Resampler? { resamplerPrototype }

    // MARK: The media thread

    func record(caller: [Int16], other: [Int16]) {
        let write = pending.withLock { pending -> Bool in
            guard !pending.finished else { return false }
            if pending.ticks.count < Self.maximumBufferedTicks {
                pending.ticks.append((caller, other))
            } else {
                pending.dropped += 1
            }
            guard !pending.writeQueued, pending.ticks.count >= Self.ticksPerWrite else { return false }
            pending.writeQueued = true
            return true
        }
        if write { writer.async { [self] in writePending() } }
    }

    // MARK: Any thread

    /// Ends the recording: what is buffered is written, the file closed, and `finished`
    /// called on the writer queue. Later ticks are ignored; a second call does nothing.
    func finish() {
        let first = pending.withLock { pending -> Bool in
            defer { pending.finished = true }
            return !pending.finished
        }
        guard first else { return }
        writer.async { [self] in
            writePending()
            file?.close()
            finished(Outcome(callID: callID, path: file?.path, seconds: file?.seconds ?? 0, droppedTicks: droppedTicks,
                             failure: failure))
        }
    }

    /// Ends the recording without a file: the one made is removed, and `finished` gets
    /// `reason` as the failure (a call whose media turned out not to be recordable, or
    /// that ended before it had any).
    func cancel(_ reason: String) {
        let first = pending.withLock { pending -> Bool in
            defer { pending.finished = true }
            return !pending.finished
        }
        guard first else { return }
        writer.async { [self] in
            if let file {
                file.close()
                unlink(file.path)
            }
            file = nil
            finished(Outcome(callID: callID, path: nil, seconds: 0, droppedTicks: 0, failure: reason, cancelled: true))
        }
    }

    /// The file's name for the `index`-th recording of `callID` (from 1): the call id with
    /// anything but letters, digits, `-` and `_` replaced by `_`.
    static func fileName(callID: String, index: Int) -> String {
        let safe = String(String.UnicodeScalarView(callID.unicodeScalars.prefix(128).map { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "-" || scalar == "_") ? scalar : "_"
        }))
        return (safe.isEmpty ? "call" : safe) + (index == 1 ? "" : "-\(index)") + ".wav"
    }

    // MARK: The writer queue

    /// Creates the file, under the first name not taken yet.
    private func create() {
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        for index in 1...Self.maximumFilesPerCall {
            let path = base + Self.fileName(callID: callID, index: index)
            do throws(RecordingFile.Failure) {
                file = try RecordingFile(creating: path, sampleRate: Self.sampleRate, channels: Self.channels)
                return
            } catch {
                // Taken (a recording of this call before): the next name. Else give up.
                if error.exists { continue }
                failure = error.description
                return
            }
        }
        failure = "\(Self.maximumFilesPerCall) recordings of call \(callID) exist in \(directory) already"
    }

    /// Appends the ticks buffered so far, then silence for the ticks dropped after them.
    private func writePending() {
        let (ticks, dropped) = pending.withLock { pending in
            defer {
                pending.ticks.removeAll(keepingCapacity: true)
                pending.dropped = 0
                pending.writeQueued = false
            }
            return (pending.ticks, pending.dropped)
        }
        droppedTicks += dropped
        guard let file, failure == nil, !ticks.isEmpty || dropped > 0 else { return }
        guard left != nil, right != nil else {
            failure = "no 48 to 16 kHz resampler"
            return file.close()
        }
        let frame = AudioPayloadCodec.frameSamples * Self.sampleRate / AudioPayloadCodec.interfaceRate
        var samples: [Int16] = []
        samples.reserveCapacity((ticks.count + dropped) * frame * Self.channels)
        for tick in ticks {
            let l = left?.process(tick.caller) ?? []
            let r = right?.process(tick.other) ?? []
            for index in 0..<min(l.count, r.count) {
                samples.append(l[index])
                samples.append(r[index])
            }
        }
        samples += [Int16](repeating: 0, count: dropped * frame * Self.channels)
        do throws(RecordingFile.Failure) { try file.append(samples) } catch {
            failure = error.description
            file.close()
        }
    }
}
