import Glibc
import ParleyNetCore
import Synchronization

/// The file descriptors the process keeps free under its limit (`RLIMIT_NOFILE`) for the
/// code that opens descriptors on its own and cannot be told to fail cleanly.
///
/// Why: on Linux, libdispatch (under Foundation and Swift concurrency) checks its worker
/// threads once a second, whenever a global queue has work waiting, by opening
/// `/proc/TID/stat`; when that `open` fails it crashes the process ("workq: registered
/// worker exited prematurely"). A server whose connections took the last descriptor would
/// therefore die at a moment of load rather than refuse the next client. SQLite (temporary
/// files) and libcurl (push connections) also need a descriptor now and then.
///
/// How: the sockets this library makes for connections and media (`TCPListener.accept`'s
/// sockets as their owner checks them, `UDPSocket`, `TCPSocket.connect` and
/// `startConnecting`) never keep a descriptor numbered `limit − count` or above. Linux
/// hands out the lowest free number, so a new descriptor numbered that high means at most
/// `count` are free; as long as no socket of ours holds one of the top `count` numbers,
/// those stay free for the others whatever holes closed connections leave lower down.
/// Off (`count` 0) until a process holds some (`hold`): parleyd does at start.
public enum DescriptorHeadroom {
    private static let held = Atomic<Int>(0)

    /// Descriptors kept free now (0: off).
    public static var count: Int { held.load(ordering: .relaxed) }

    /// Keeps `count` descriptors free from now on (0 turns the check off).
    public static func hold(_ count: Int) {
        held.store(max(0, count), ordering: .relaxed)
    }

    /// True when `descriptor`, just obtained, is one of the numbers kept free: its owner
    /// must close it (and refuse what it was for).
    public static func encroaches(on descriptor: Int32) -> Bool {
        let count = held.load(ordering: .relaxed)
        guard count > 0, descriptor >= 0 else { return false }
        // RLIM_INFINITY is all ones; the C macro does not import.
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return false }
        return UInt64(descriptor) + UInt64(count) >= UInt64(limit.rlim_cur)
    }

    /// The error for a socket refused for the headroom: as the system says when it is out
    /// of descriptors, so callers treat both alike.
    static func refusal(_ operation: String) -> NetError {
        .system(operation + " (descriptor kept free, DescriptorHeadroom)", errno: EMFILE)
    }
}
