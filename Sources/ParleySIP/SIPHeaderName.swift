/// Header field names as SIP compares them: case-insensitively, with the compact forms of
/// RFC 3261 §7.3.3 and its extensions standing for their full names.
enum SIPHeaderName {
    /// The lowercase full name for `name`: `"v"` and `"VIA"` both give `"via"`.
    static func canonical(_ name: some StringProtocol) -> String {
        let utf8 = name.utf8
        if utf8.count == 1, let byte = utf8.first, let full = compactForms[SIPGrammar.lowercase(byte)] {
            return full
        }
        return SIPGrammar.lowercased(name)
    }

    /// Whether two names denote the same header field.
    static func same(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        if a.utf8.count > 1 && b.utf8.count > 1 { return SIPGrammar.equalsIgnoringCase(a, b) }
        return canonical(a) == canonical(b)
    }

    /// Compact forms: RFC 3261 §7.3.3 (i m e l c f s k t v), RFC 6665 (o u), RFC 3515 (r),
    /// RFC 3841 (a), RFC 3892 (b), RFC 4028 (x), RFC 8224 (y).
    static let compactForms: [UInt8: String] = [
        UInt8(ascii: "i"): "call-id",
        UInt8(ascii: "m"): "contact",
        UInt8(ascii: "e"): "content-encoding",
        UInt8(ascii: "l"): "content-length",
        UInt8(ascii: "c"): "content-type",
        UInt8(ascii: "f"): "from",
        UInt8(ascii: "s"): "subject",
        UInt8(ascii: "k"): "supported",
        UInt8(ascii: "t"): "to",
        UInt8(ascii: "v"): "via",
        UInt8(ascii: "o"): "event",
        UInt8(ascii: "u"): "allow-events",
        UInt8(ascii: "r"): "refer-to",
        UInt8(ascii: "a"): "accept-contact",
        UInt8(ascii: "b"): "referred-by",
        UInt8(ascii: "x"): "session-expires",
        UInt8(ascii: "y"): "identity",
    ]

    /// Headers whose grammar is a comma-separated list, so one line may carry several
    /// values (RFC 3261 §7.3.1). Headers not named here keep their commas: the
    /// authentication headers, Date, Retry-After, Warning's quoted text and every unknown
    /// header (RFC 4475 §3.1.1.1's `UnknownHeaderWithUnusualValue: ;;,,;;,;` is one value).
    static let commaSeparated: Set<String> = [
        "accept", "accept-contact", "accept-encoding", "accept-language", "accept-resource-priority",
        "alert-info", "allow", "allow-events", "call-info", "contact", "content-encoding",
        "content-language", "error-info", "history-info", "in-reply-to", "p-asserted-identity",
        "p-associated-uri", "p-preferred-identity", "path", "proxy-require", "reason",
        "record-route", "reject-contact", "request-disposition", "require", "resource-priority",
        "route", "security-client", "security-server", "security-verify", "service-route",
        "supported", "unsupported", "via", "warning",
    ]

    /// Headers a message may hold at most once (their grammar has one value).
    static let singleValued: Set<String> = [
        "call-id", "content-length", "content-type", "cseq", "from", "max-forwards", "to",
        "expires", "min-expires", "session-expires", "min-se",
    ]

    /// The name as RFC 3261 spells it, for error reasons and headers we add.
    static func display(_ canonical: String) -> String {
        switch canonical {
        case "call-id": "Call-ID"
        case "cseq": "CSeq"
        case "www-authenticate": "WWW-Authenticate"
        case "min-se": "Min-SE"
        case "p-asserted-identity": "P-Asserted-Identity"
        default: capitalizedWords(canonical)
        }
    }

    private static func capitalizedWords(_ name: String) -> String {
        var out: [UInt8] = []
        var startOfWord = true
        for byte in name.utf8 {
            out.append(startOfWord && byte >= 0x61 && byte <= 0x7a ? byte - 0x20 : byte)
            startOfWord = byte == UInt8(ascii: "-")
        }
        return String(decoding: out, as: UTF8.self)
    }
}
