/// The nonce counts a ``SIPDigestServer`` has accepted, so a captured request cannot be
/// replayed: per nonce, a sliding window like IPsec's and SRTP's (the highest nc seen and
/// a 64-bit map of the 64 counts below it).
///
/// A window rather than a table of counts per nonce: it takes 12 bytes whatever the
/// client does, and still accepts counts that arrive out of order (a client with an INVITE
/// and a BYE in flight on one nonce) as long as they are within 64 of the highest. A count
/// older than that is refused, as a replay would be; the client then gets a new nonce.
///
/// Memory is bounded: at most `capacity` nonces have a window. Windows of expired nonces
/// are dropped first; if all are live, the windows of the oldest issue second are dropped
/// and every nonce issued at or before that second is thereafter treated as stale (its
/// client gets a fresh nonce), never as unseen, so dropping a window can never make a
/// request replayable. Only requests whose response was right reach the window, so
/// forged requests cannot fill it.
struct SIPDigestReplayWindow: Sendable {
    /// How far below the highest nc a count may arrive.
    static let width: UInt32 = 64

    enum Outcome: Equatable {
        /// First use of this count: accept.
        case fresh
        /// Seen before, or older than the window: refuse.
        case replayed
        /// The nonce's window was dropped for room: answer stale.
        case forgotten
    }

    private struct Window: Sendable {
        var highest: UInt32
        /// Bit i set: nc `highest - i` was used.
        var seen: UInt64
    }

    let capacity: Int
    private var windows: [SIPDigestNonce: Window] = [:]
    /// Nonces issued at or before this second have lost their window.
    private(set) var forgottenThrough: Int64?

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Nonces with a window.
    var count: Int { windows.count }

    /// Records nc `count` of `nonce` (already verified and not expired).
    mutating func record(_ nonce: SIPDigestNonce, count: UInt32, now: Int64, lifetime: Int64) -> Outcome {
        if var window = windows[nonce] {
            let outcome = Self.mark(&window, count)
            windows[nonce] = window
            return outcome
        }
        if let forgottenThrough, nonce.issuedAt <= forgottenThrough { return .forgotten }
        if windows.count >= capacity {
            removeExpired(now: now, lifetime: lifetime)
        }
        if windows.count >= capacity {
            let oldest = windows.keys.lazy.map(\.issuedAt).min() ?? nonce.issuedAt
            forgottenThrough = max(forgottenThrough ?? oldest, oldest)
            windows = windows.filter { $0.key.issuedAt > oldest }
            if nonce.issuedAt <= oldest { return .forgotten }
        }
        windows[nonce] = Window(highest: count, seen: 1)
        return .fresh
    }

    /// Drops the windows of expired nonces; the server calls it when full, and a caller
    /// may call it now and then so an idle server frees its memory too.
    mutating func removeExpired(now: Int64, lifetime: Int64) {
        windows = windows.filter { !$0.key.isExpired(now: now, lifetime: lifetime) }
    }

    private static func mark(_ window: inout Window, _ count: UInt32) -> Outcome {
        if count > window.highest {
            let shift = count - window.highest
            window.seen = shift >= 64 ? 1 : window.seen << UInt64(shift) | 1
            window.highest = count
            return .fresh
        }
        let offset = window.highest - count
        guard offset < width else { return .replayed }
        let bit: UInt64 = 1 << UInt64(offset)
        if window.seen & bit != 0 { return .replayed }
        window.seen |= bit
        return .fresh
    }
}
