/// Exit statuses of `parley call`, `parley listen` and `parley token`; docs/softphone.md
/// lists them. One status per way a call can end, so scripts can tell them apart.
enum SoftphoneExitCode: Int32, CaseIterable {
    /// `call`: established and ended `hungUp` (by either side). `listen`: every call it
    /// took ended normally (see `SoftphoneOutcome`).
    case success = 0
    /// Bad flags, a bad token, a WAV file that cannot be read, a server that cannot be
    /// reached or that refused the sign-in.
    case usage = 2
    /// The call ended with cause `error` (e.g. `destination user not found`).
    case callError = 3
    case denied = 4
    case noAnswer = 5
    case timeout = 6
    /// The caller hung up before the answer (e.g. Ctrl-C while ringing).
    case canceled = 7
    case inactive = 8
    case otherDeviceAnswered = 9
    /// The connection to the server failed after sign-in and the SDK gave up.
    case connectionLost = 10
    /// The call ended `hungUp` but its media never became established.
    case notEstablished = 11
    /// Interrupted before any call existed (Ctrl-C while connecting), like a shell's 128+SIGINT.
    case interrupted = 130
}
