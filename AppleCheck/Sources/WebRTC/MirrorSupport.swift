// MIRROR of Google's libwebrtc Objective-C API (module `WebRTC` of the stasel/WebRTC binary
// distribution), for running Parley's Apple media engine on Linux (AppleCheck/README.md).
// Only what ParleySDKApple's AppleMediaEngine uses, declared as Swift imports the headers
// of sdk/objc (each type cites its header), and implemented over Parley's own media leg.
// Apple framework modules export Foundation to their importers; the stasel module's
// umbrella header imports Foundation too, so the mirror does the same.
@_exported import Foundation

/// The mirror's own lock around mutable state (not part of libwebrtc's API).
final class MirrorLocked<Value>: @unchecked Sendable {
    // @unchecked: every access to `value` holds `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    var current: Value { withLock { $0 } }
}

/// Carries a libwebrtc object or completion handler (none of them `Sendable`, as in the
/// real headers) to the mirror's signaling queue, where libwebrtc too would call it.
/// One value per box: the README's Swift 6.3.1 crash came from closures in a tuple.
struct MirrorUnchecked<Value>: @unchecked Sendable {
    // @unchecked: the mirror only hands the value to its one serial signaling queue.
    let value: Value
    init(_ value: Value) { self.value = value }
}
