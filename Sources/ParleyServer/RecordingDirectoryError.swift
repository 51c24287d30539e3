/// `--recording-directory` names a directory parleyd cannot record into (missing, not a
/// directory, not writable): the start fails with it rather than every recording later.
public struct RecordingDirectoryError: Error, CustomStringConvertible {
    public let message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}
