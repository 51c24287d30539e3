// What the mirror modules share (not part of any Apple or libwebrtc API): a lock around
// their state, used from any thread as the real frameworks are, and a box that carries
// their non-`Sendable` objects to the one queue that uses them.
import Foundation

/// A value behind a lock.
public final class MirrorLocked<Value>: @unchecked Sendable {
    // @unchecked: every access to `value` holds `lock`.
    private let lock = NSLock()
    private var value: Value

    /// A lock around `value`.
    public init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, under the lock.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// The value now.
    public var current: Value { withLock { $0 } }
}

/// Carries a framework object or completion handler (not `Sendable`, as in the real
/// frameworks) to the mirror's own serial queue, where the real framework would use it.
/// One value per box: the README's Swift 6.3.1 crash came from closures in a tuple.
public struct MirrorUnchecked<Value>: @unchecked Sendable {
    // @unchecked: the mirrors only hand the value to one serial queue of theirs.
    /// The carried value.
    public let value: Value
    /// A box for `value`.
    public init(_ value: Value) { self.value = value }
}
