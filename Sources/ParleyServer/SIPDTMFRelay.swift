import ParleySIP

/// DTMF a SIP peer sends in an INFO rather than as RFC 4733 events: the body of
/// `application/dtmf-relay` (`Signal=5` and `Duration=160` lines, as Cisco and most
/// PBXs send it) or of `application/dtmf` (the digit alone). Sans-I/O.
enum SIPDTMFRelay {
    /// The digits the body carries (`0-9 * # A-D`; `10` and `11` are `*` and `#`, as some
    /// phones write them), or nil when it is not DTMF or names no key.
    static func digits(contentType: SIPContentType?, body: [UInt8]) -> String? {
        guard let contentType, body.count <= 1024 else { return nil }
        let text = String(decoding: body, as: UTF8.self)
        if contentType.matches(type: "application", subtype: "dtmf-relay") {
            for line in text.split(whereSeparator: \.isNewline) {
                let parts = line.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingSpaces.lowercased() == "signal" else { continue }
                return key(parts[1].trimmingSpaces)
            }
            return nil
        }
        if contentType.matches(type: "application", subtype: "dtmf") {
            return key(text.trimmingSpaces)
        }
        return nil
    }

    private static func key(_ text: Substring) -> String? {
        switch text.uppercased() {
        case "10": return "*"
        case "11": return "#"
        case let key where key.count == 1 && "0123456789*#ABCD".contains(key): return key
        default: return nil
        }
    }
}

extension Substring {
    /// Without the spaces and tabs at either end.
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}

extension String {
    fileprivate var trimmingSpaces: Substring { Substring(self).trimmingSpaces }
}
