public import ParleySIP

/// The DTMF key an INFO carries when a SIP peer signals keys in the signalling rather
/// than as RFC 4733 events: `application/dtmf-relay` (lines like `Signal=5` and
/// `Duration=160`, the de facto format of PBXs and gateways) or `application/dtmf` (the
/// key alone). Sans-I/O.
public enum SIPDTMFInfo {
    /// The most body read: a DTMF body is a few dozen bytes.
    public static let maxBodyLength = 1024

    /// The key (`0-9 * # A-D`; `10` and `11` read as `*` and `#`, as some phones write
    /// them), or nil when the body is not DTMF or names no key.
    public static func key(contentType: SIPContentType?, body: [UInt8]) -> String? {
        guard let contentType, body.count <= maxBodyLength else { return nil }
        let text = String(decoding: body, as: UTF8.self)
        if contentType.matches(type: "application", subtype: "dtmf") { return normalized(text) }
        guard contentType.matches(type: "application", subtype: "dtmf-relay") else { return nil }
        for line in text.split(whereSeparator: \.isNewline) {
            guard let equals = line.firstIndex(of: "=") else { continue }
            if SIPText.equalsIgnoringCase(trimmed(line[..<equals]), "signal") {
                return normalized(line[line.index(after: equals)...])
            }
        }
        return nil
    }

    private static func normalized(_ text: some StringProtocol) -> String? {
        let value = trimmed(text).uppercased()
        switch value {
        case "10": return "*"
        case "11": return "#"
        default:
            guard value.count == 1, "0123456789*#ABCD".contains(value) else { return nil }
            return value
        }
    }

    private static func trimmed(_ text: some StringProtocol) -> Substring {
        var slice = Substring(text)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return slice
    }
}
