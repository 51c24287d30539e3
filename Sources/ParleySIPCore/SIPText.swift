/// ASCII text helpers for the comparisons SIP makes case-insensitively (header names,
/// transports, hosts). ParleySIP's grammar helpers are internal to it; these few are what
/// the cores need.
enum SIPText {
    /// `text` with ASCII letters lowercased; other bytes unchanged.
    static func lowercased(_ text: some StringProtocol) -> String {
        String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5a ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// Whether `text` starts with `prefix`, ASCII letters compared case-insensitively.
    static func hasPrefixIgnoringCase(_ text: some StringProtocol, _ prefix: String) -> Bool {
        let head = text.utf8.prefix(prefix.utf8.count)
        return head.count == prefix.utf8.count && lowercased(String(decoding: head, as: UTF8.self)) == lowercased(prefix)
    }

    /// Whether two texts are equal with ASCII letters compared case-insensitively.
    static func equalsIgnoringCase(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        a.utf8.count == b.utf8.count && lowercased(a) == lowercased(b)
    }
}
