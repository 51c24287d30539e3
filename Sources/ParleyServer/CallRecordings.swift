import Dispatch
import Glibc
import ParleyVoiceAPI
import ParleyWireCore

/// The recordings an application's backend asks for (docs/backend.md, "Recording"): its
/// SVAML's `startRecording` and `stopRecording` instructions, carried out on the calls
/// whose media parleyd decodes (a SIP caller's gateway to an app, a bridge of two SIP
/// legs, a call parleyd answered itself), each recording a WAV file in the operator's
/// directory (`--recording-directory`), and a signed `notify` to the backend once the file
/// is complete.
///
/// Without a directory, or for a call whose media is not decoded (two apps relayed, a
/// conference room), `startRecording` is refused with a `recording.refused` log line and
/// the call goes on unrecorded. Files are written on one queue of their own
/// (`CallRecording`); `finishWrites` waits for it (shutdown).
///
/// Threads: `perform`, `start` and `stop` on the engine's loop, as the anchor's methods.
final class CallRecordings: @unchecked Sendable {
    // @unchecked: immutable; the anchor is used on the engine's loop only.

    /// The `type` of the notify sent when a recording's file is complete.
    static let finishedType = "recording_finished"

    /// The absolute directory recordings go to; nil: recordings are refused.
    let directory: String?
    private let anchor: MediaAnchor?
    private let backend: BackendCallbacks?
    private let log: ServerLog
    private let writer = DispatchQueue(label: "parley.recording")

    init(directory: String?, anchor: MediaAnchor?, backend: BackendCallbacks?, log: ServerLog) {
        self.directory = directory
        self.anchor = anchor
        self.backend = backend
        self.log = log
    }

    /// The recording instructions among `instructions`, in order (the others are not this
    /// type's): for SVAML answered to a call parleyd does not answer itself (`connect...`).
    /// `placed`: the call is in the engine (its media made, or made once its record is
    /// committed); false: only media here now can be recorded.
    func perform(_ instructions: [SVAMLInstruction], callID: String, applicationKey: String, placed: Bool = false) {
        for instruction in instructions {
            switch instruction {
            case .startRecording(let options): start(callID: callID, applicationKey: applicationKey, options: options, placed: placed)
            case .stopRecording: stop(callID: callID)
            default: break
            }
        }
    }

    /// Starts recording `callID` (`startRecording`, with Sinch's `options` as sent): of
    /// them, `notificationEvents` (default true: a notify when the file is complete) is
    /// read; `format` other than `wav` is logged, and WAV written anyway; the storage
    /// options (`destinationUrl`, `credentials`) are not read, the operator's directory
    /// holds every file. A call recorded already goes on with its recording.
    func start(callID: String, applicationKey: String, options: JSONObject?, placed: Bool = false) {
        guard let directory else {
            return refuse(callID, "no --recording-directory is set: the call goes on unrecorded")
        }
        guard let anchor else { return refuse(callID, "this server has no media anchor") }
        if let reason = anchor.recordingRefusal(callID: callID, placed: placed) { return refuse(callID, reason) }
        let notify = options?["notificationEvents"]?.boolValue ?? true
        if let format = options?["format"]?.stringValue, format.lowercased() != "wav" {
            log.info("recording.format", ["call": callID, "asked": format, "written": "wav"])
        }
        let recording = CallRecording(callID: callID, directory: directory, writer: writer) { [weak self] outcome in
            self?.finished(outcome, applicationKey: applicationKey, notify: notify)
        }
        anchor.startRecording(callID: callID, recording)
        log.info("recording.started", ["call": callID])
    }

    /// Stops recording `callID` (`stopRecording`): its file is completed, and the notify
    /// follows. Nothing when it is not recorded.
    func stop(callID: String) {
        anchor?.stopRecording(callID: callID)
    }

    /// Waits until every recording finished so far is written and closed (shutdown, after
    /// the media anchor closed its calls).
    func finishWrites() {
        writer.sync {}
    }

    /// The `destination` a notify names: the file's `file://` URL, its path
    /// percent-encoded but for `/` and RFC 3986's unreserved characters.
    static func fileURL(of path: String) -> String {
        var url = "file://"
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                url.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                url += "%" + Hex.encode([byte], uppercase: true)
            }
        }
        return url
    }

    /// `path` as an absolute directory parleyd can create files in.
    /// - Throws: `RecordingDirectoryError` when it is missing, not a directory, or not
    ///   writable by this process.
    static func resolveDirectory(_ path: String) throws(RecordingDirectoryError) -> String {
        guard let resolved = realpath(path, nil) else {
            throw RecordingDirectoryError("the recording directory \(path): \(String(cString: strerror(errno)))")
        }
        defer { free(resolved) }
        let absolute = String(cString: resolved)
        var status = stat()
        guard stat(absolute, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw RecordingDirectoryError("the recording directory \(path) is not a directory")
        }
        guard access(absolute, W_OK | X_OK) == 0 else {
            throw RecordingDirectoryError("the recording directory \(path) is not writable: \(String(cString: strerror(errno)))")
        }
        return absolute
    }

    // MARK: Private

    private func refuse(_ callID: String, _ reason: String) {
        log.warning("recording.refused", ["call": callID, "reason": reason])
    }

    /// A recording ended (on the writer queue): logged, and a complete file notified.
    private func finished(_ outcome: CallRecording.Outcome, applicationKey: String, notify: Bool) {
        let seconds = String(Int(outcome.seconds.rounded()))
        if outcome.cancelled { return refuse(outcome.callID, outcome.failure ?? "cancelled") }
        guard outcome.failure == nil, let path = outcome.path else {
            return log.warning("recording.failed", ["call": outcome.callID, "file": outcome.path ?? "-", "seconds": seconds,
                                                    "reason": outcome.failure ?? "no file"])
        }
        log.info("recording.finished", ["call": outcome.callID, "file": path, "seconds": seconds,
                                         "dropped": String(outcome.droppedTicks)])
        guard notify, let backend, backend.sends(.notify, applicationKey: applicationKey) else { return }
        let event = NotifyEvent(callID: outcome.callID, type: Self.finishedType, destination: Self.fileURL(of: path))
        backend.post(.notify(event), applicationKey: applicationKey) { [log] result in
            if case .failure(let failure) = result {
                log.warning("backend.notify.failed", ["call": outcome.callID, "reason": failure.message])
            }
        }
    }
}
