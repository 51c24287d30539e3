#if canImport(CallKit) || (canImport(LiveCommunicationKit) && !os(macOS)) || canImport(WebRTC)
import Foundation

// The adapters' own small helpers: ParleySDK keeps its `Locked` internal, and this target
// uses only the SDK's public API (so it can sit on any core the SDK is split into).

/// A value behind a lock. `NSLock` rather than `Synchronization.Mutex`, which needs
/// iOS 18: the adapters run on every iOS version the SDK supports.
final class AdapterLocked<Value>: @unchecked Sendable {
    // @unchecked: every access to `value` goes through `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    var current: Value { withLock { $0 } }
}

/// A weak reference, so an adapter does not keep its delegate (the system-call service,
/// which owns the adapter) alive.
struct WeakDelegate {
    weak var object: AnyObject?
}
#endif
