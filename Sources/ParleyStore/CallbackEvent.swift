/// One event parleyd can POST to an application's backend (issue 12, the Sinch Voice v1
/// callbacks): `ice` when a call arrives, `ace` when the callee answers, `dice` when the
/// call ends, `pie` with a menu's result, `notify` when a recording is ready.
public enum CallbackEvent: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    case ice, ace, dice, pie, notify

    /// The order of `allCases`, so lists of events print the same every time.
    public static func < (lhs: CallbackEvent, rhs: CallbackEvent) -> Bool {
        lhs.rank < rhs.rank
    }

    private var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }
}
