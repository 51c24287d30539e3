import Foundation

/// A value behind a lock, for state read from any thread. `NSLock` rather than
/// `Synchronization.Mutex` so the SDK also builds for Apple systems before iOS 18.
/// Engines use it too (`@_spi(ParleyEngines)`); apps do not see it.
@_spi(ParleyEngines) public final class Locked<Value>: @unchecked Sendable {
    // @unchecked: every access to `value` goes through `lock`.
    private let lock = NSLock()
    private var value: Value

    /// A lock around `value`.
    public init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, under the lock.
    public func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// The value now.
    public var current: Value { withLock { $0 } }
}

/// A weak reference for a `Locked` delegate slot (engines and adapters use it too).
@_spi(ParleyEngines) public struct WeakReference {
    /// The object, while something else keeps it alive.
    public weak var object: AnyObject?
    /// A reference to `object` (none by default).
    public init(object: AnyObject? = nil) { self.object = object }
}
