/// The `retry-after` field of a provider's answer (RFC 9110 §10.2.3): APNs sends it with
/// 429 and 503, FCM with 429 (and may with 5xx). Lower-case under HTTP/2; its value is
/// delay-seconds (`120`) or an HTTP date (`Fri, 31 Dec 2027 23:59:59 GMT`).
enum RetryAfter {
    /// The largest wait kept, in seconds (about 68 years): anything longer means the same
    /// (past every ring deadline) and this bound keeps `seconds * 1000` far from overflow.
    static let maximumSeconds = Int(Int32.max)

    /// How many whole seconds after `nowMilliseconds` (since the epoch) the field says to
    /// wait, rounded up, so a retry at `now + seconds` is never early; 0 for a date in the
    /// past; nil when the value is neither form (then the field is ignored).
    static func seconds(_ value: String, nowMilliseconds: Int64) -> Int? {
        let text = value.trimmingSpacesAndTabs()
        guard !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            var seconds = 0
            for byte in text.utf8 {
                seconds = min(maximumSeconds, seconds * 10 + Int(byte - UInt8(ascii: "0")))
            }
            return seconds
        }
        let nowSeconds = nowMilliseconds >= 0 ? nowMilliseconds / 1000 : (nowMilliseconds - 999) / 1000
        guard let date = HTTPDate.unixSeconds(text, nowSeconds: nowSeconds) else { return nil }
        let ahead = date * 1000 - nowMilliseconds
        guard ahead > 0 else { return 0 }
        return Int(min(Int64(maximumSeconds), (ahead + 999) / 1000))
    }
}

extension String {
    fileprivate func trimmingSpacesAndTabs() -> String {
        var view = utf8[...]
        while let first = view.first, first == 0x20 || first == 0x09 { view = view.dropFirst() }
        while let last = view.last, last == 0x20 || last == 0x09 { view = view.dropLast() }
        return String(decoding: view, as: UTF8.self)
    }
}
