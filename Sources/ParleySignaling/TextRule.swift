/// What a string field may contain. `SignalingCodec.decode` applies one rule to every
/// string it reads, so the limits in docs/protocol.md hold for every accepted frame.
struct TextRule: Sendable {
    /// A failed rule: the wire code (`too_large` for lengths, else `bad_request`) and why.
    struct Failure: Error, Sendable {
        let code: SignalingErrorCode
        let reason: String
    }

    var minBytes = 1
    var maxBytes: Int
    /// For rules over a fixed ASCII alphabet: which bytes are allowed (256 entries), and
    /// the alphabet's description for messages.
    private var allowedBytes: [Bool]? = nil
    var alphabetDescription = ""
    /// Free text: anything but control characters (U+0000-U+001F, U+007F).
    var forbidsControlCharacters = true
    /// A further check of the whole value, returning why it fails.
    var format: (@Sendable (String) -> String?)? = nil

    init(
        minBytes: Int = 1, maxBytes: Int, alphabet: ((UInt8) -> Bool)? = nil, alphabetDescription: String = "",
        forbidsControlCharacters: Bool = true, format: (@Sendable (String) -> String?)? = nil
    ) {
        self.minBytes = minBytes
        self.maxBytes = maxBytes
        self.allowedBytes = alphabet.map { allowed in (0...255).map { allowed(UInt8($0)) } }
        self.alphabetDescription = alphabetDescription
        self.forbidsControlCharacters = forbidsControlCharacters
        self.format = format
    }

    func check(_ text: String) throws(Failure) {
        let length = text.utf8.count
        if length > maxBytes {
            throw Failure(code: .tooLarge, reason: "\(length) bytes exceeds the limit of \(maxBytes)")
        }
        if length < minBytes {
            throw Failure(code: .badRequest, reason: minBytes == 1 ? "must not be empty" : "must be at least \(minBytes) bytes")
        }
        // Byte-wise: bytes below 0x80 never occur inside a multi-byte UTF-8 sequence, so
        // the first refused byte is an ASCII character or the lead byte of a scalar.
        if let allowedBytes {
            var offset = 0
            for byte in text.utf8 {
                if !allowedBytes[Int(byte)] {
                    throw Failure(code: .badRequest, reason: "character '\(Self.scalar(in: text, at: offset))' at byte \(offset) is not allowed (allowed: \(alphabetDescription))")
                }
                offset += 1
            }
        } else if forbidsControlCharacters {
            var offset = 0
            for byte in text.utf8 {
                if byte < 0x20 || byte == 0x7F {
                    throw Failure(code: .badRequest, reason: "control character '\(Self.scalar(in: text, at: offset))' at byte \(offset) is not allowed")
                }
                offset += 1
            }
        }
        if let format, let reason = format(text) {
            throw Failure(code: .badRequest, reason: reason)
        }
    }

    /// The scalar starting at UTF-8 offset `offset`, for an error message.
    private static func scalar(in text: String, at offset: Int) -> String {
        let index = text.utf8.index(text.utf8.startIndex, offsetBy: offset)
        return displayScalar(text.unicodeScalars[index])
    }
}

// MARK: The rules of protocol version 1

private func isAlphanumeric(_ b: UInt8) -> Bool {
    (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
}

extension TextRule {
    /// Request ids, session ids, device ids, capability names: `A-Z a-z 0-9 . _ : -`.
    static func identifier(maxBytes: Int) -> TextRule {
        TextRule(
            maxBytes: maxBytes,
            alphabet: { isAlphanumeric($0) || $0 == 0x2E || $0 == 0x5F || $0 == 0x3A || $0 == 0x2D },
            alphabetDescription: "A-Z a-z 0-9 . _ : -"
        )
    }

    static let requestID = identifier(maxBytes: SignalingLimits.maxIdentifierBytes)
    static let deviceID = identifier(maxBytes: SignalingLimits.maxDeviceIDBytes)
    static let mid = identifier(maxBytes: 32)
    static let shortVisibleASCII = visibleASCII(maxBytes: SignalingLimits.maxIdentifierBytes)
    static let pushToken = visibleASCII(maxBytes: SignalingLimits.maxPushTokenBytes)
    static let pushPayload = visibleASCII(maxBytes: SignalingLimits.maxPushPayloadBytes)
    static let message = text(maxBytes: SignalingLimits.maxTextBytes)
    static let fieldPath = text(maxBytes: SignalingLimits.maxUserIDBytes)
    static let platform = text(maxBytes: 128)
    static let credential = text(maxBytes: 256)
    static let displayName = text(maxBytes: SignalingLimits.maxDisplayNameBytes)

    /// User ids: at most 255 bytes of `A-Z a-z 0-9 - _ =`, the rule of the calling issue.
    static let userID = TextRule(
        maxBytes: SignalingLimits.maxUserIDBytes,
        alphabet: { isAlphanumeric($0) || $0 == 0x2D || $0 == 0x5F || $0 == 0x3D },
        alphabetDescription: "A-Z a-z 0-9 - _ ="
    )

    /// Conference ids: like user ids, at most 64 bytes.
    static let conferenceID = TextRule(
        maxBytes: SignalingLimits.maxIdentifierBytes,
        alphabet: { isAlphanumeric($0) || $0 == 0x2D || $0 == 0x5F || $0 == 0x3D },
        alphabetDescription: "A-Z a-z 0-9 - _ ="
    )

    /// Application keys: `A-Z a-z 0-9 - _`.
    static let appKey = TextRule(
        maxBytes: SignalingLimits.maxIdentifierBytes,
        alphabet: { isAlphanumeric($0) || $0 == 0x2D || $0 == 0x5F },
        alphabetDescription: "A-Z a-z 0-9 - _"
    )

    /// Call ids: a UUID in canonical lower-case form, 8-4-4-4-12 hex digits.
    static let callID = TextRule(
        maxBytes: 36,
        alphabet: { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || $0 == 0x2D },
        alphabetDescription: "0-9 a-f -",
        format: { text in
            let bytes = Array(text.utf8)
            guard bytes.count == 36 else { return "must be a lower-case UUID (36 characters), found \(bytes.count) characters" }
            for (i, b) in bytes.enumerated() where (b == 0x2D) != [8, 13, 18, 23].contains(i) {
                return "must be a lower-case UUID (8-4-4-4-12 hex digits): unexpected '\(Character(UnicodeScalar(b)))' at byte \(i)"
            }
            return nil
        }
    )

    /// User tokens: a compact JWS, three base64url parts separated by dots (RFC 7515 §7.1).
    static let jwt = TextRule(
        maxBytes: SignalingLimits.maxTokenBytes,
        alphabet: { isAlphanumeric($0) || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E },
        alphabetDescription: "A-Z a-z 0-9 - _ .",
        format: { text in
            let parts = text.utf8.split(separator: 0x2E, omittingEmptySubsequences: false)
            guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }) else {
                return "is not a JWT: expected three non-empty base64url parts separated by '.'"
            }
            return nil
        }
    )

    /// Phone numbers: E.164 with a leading plus, `+` then 2 to 15 digits, no leading zero.
    static let phoneNumber = TextRule(
        maxBytes: 16,
        alphabet: { ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2B },
        alphabetDescription: "+ 0-9",
        format: { text in
            let bytes = Array(text.utf8)
            guard bytes.count >= 3, bytes[0] == 0x2B, bytes[1] != 0x30, !bytes.dropFirst().contains(0x2B) else {
                return "must be an E.164 number: '+' then 2 to 15 digits, the first not 0"
            }
            return nil
        }
    )

    /// SIP addresses, printable ASCII without spaces or `<>"`: a `sip:` or `sips:` URI
    /// (RFC 3261 §19.1), or the SDK's short form `user@domain[:port][;transport=udp|tcp|tls]`.
    static let sipURI = TextRule(
        maxBytes: SignalingLimits.maxUserIDBytes,
        alphabet: { $0 >= 0x21 && $0 <= 0x7E && $0 != 0x3C && $0 != 0x3E && $0 != 0x22 },
        alphabetDescription: "printable ASCII except < > \"",
        format: sipAddressProblem
    )

    /// SDP bodies (RFC 8866 §5): not parsed here, only bounded and checked to start with `v=`.
    static let sdp = TextRule(
        maxBytes: SignalingLimits.maxSDPBytes,
        forbidsControlCharacters: false,
        format: { text in
            guard text.utf8.starts(with: "v=".utf8) else { return "is not an SDP description: must start with \"v=\"" }
            guard !text.utf8.contains(where: { $0 < 0x20 && $0 != 0x0D && $0 != 0x0A && $0 != 0x09 }) else {
                return "SDP must not contain control characters other than CR, LF and tab"
            }
            return nil
        }
    )

    /// Free text without control characters.
    static func text(maxBytes: Int, minBytes: Int = 1) -> TextRule {
        TextRule(minBytes: minBytes, maxBytes: maxBytes)
    }

    /// Printable ASCII without spaces: versions, push tokens, codec names, push payloads.
    static func visibleASCII(maxBytes: Int) -> TextRule {
        TextRule(maxBytes: maxBytes, alphabet: { $0 >= 0x21 && $0 <= 0x7E }, alphabetDescription: "printable ASCII without spaces")
    }

    /// DTMF digits: `0-9 * # A-D` (RFC 4733 §3.2 events 0-15).
    static let dtmfDigits = TextRule(
        maxBytes: SignalingLimits.maxDTMFDigits,
        alphabet: { ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2A || $0 == 0x23 || ($0 >= 0x41 && $0 <= 0x44) },
        alphabetDescription: "0-9 * # A B C D"
    )

    /// ICE candidates as in an `a=candidate` line without `a=` (RFC 8839 §5.1), or empty for end of candidates.
    static let iceCandidate = TextRule(
        minBytes: 0,
        maxBytes: 1024,
        format: { text in
            text.isEmpty || text.hasPrefix("candidate:") ? nil : "must start with \"candidate:\" (or be empty for end of candidates)"
        }
    )

    /// Custom header names: `A-Z a-z 0-9 - _ .`, so they also fit SIP header names.
    static let headerName = TextRule(
        maxBytes: 64,
        alphabet: { isAlphanumeric($0) || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E },
        alphabetDescription: "A-Z a-z 0-9 - _ ."
    )

    /// Custom header values: any text without control characters, possibly empty.
    static let headerValue = TextRule(minBytes: 0, maxBytes: SignalingLimits.maxHeadersBytes)

    /// Bundle ids and Android package names.
    static let appID = TextRule(
        maxBytes: SignalingLimits.maxUserIDBytes,
        alphabet: { isAlphanumeric($0) || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E },
        alphabetDescription: "A-Z a-z 0-9 - _ ."
    )

    /// Error codes: snake_case.
    static let errorCode = TextRule(
        maxBytes: SignalingLimits.maxIdentifierBytes,
        alphabet: { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F },
        alphabetDescription: "a-z 0-9 _"
    )

    /// STUN and TURN server URLs (RFC 7064, RFC 7065).
    static let iceServerURL = TextRule(
        maxBytes: 512,
        alphabet: { $0 >= 0x21 && $0 <= 0x7E },
        alphabetDescription: "printable ASCII without spaces",
        format: { text in
            ["stun:", "stuns:", "turn:", "turns:"].contains(where: { text.hasPrefix($0) }) ? nil : "must be a stun:, stuns:, turn: or turns: URL"
        }
    )
}

/// Why `text` (printable ASCII) is not a SIP address, or nil. A URI is only checked to name
/// something after its scheme: the SIP stack parses it fully when it dials. The short form
/// is checked part by part, since the server turns it into a URI itself.
private func sipAddressProblem(_ text: String) -> String? {
    let bytes = Array(text.utf8)
    let lower = text.lowercased()
    for scheme in ["sips:", "sip:"] where lower.hasPrefix(scheme) {
        return bytes.count > scheme.utf8.count ? nil : "must name a user or host after the scheme"
    }
    guard let at = bytes.firstIndex(of: 0x40), !bytes[..<at].contains(0x3A) else {
        // Another scheme (`tel:...`) is told to use SIP's; anything else gets both forms.
        if bytes.contains(0x3A) { return "must be a SIP URI starting with sip: or sips:" }
        return "must be a sip: or sips: URI, or user@domain[:port][;transport=udp|tcp|tls]"
    }
    guard at > 0 else { return "must name a user before '@'" }
    let rest = bytes[(at + 1)...]
    if rest.contains(0x40) { return "must contain one '@' (user@domain)" }
    let hostPort: ArraySlice<UInt8>
    if let semicolon = rest.firstIndex(of: 0x3B) {
        hostPort = rest[..<semicolon]
        let parameter = String(decoding: rest[(semicolon + 1)...], as: UTF8.self).lowercased()
        guard ["transport=udp", "transport=tcp", "transport=tls"].contains(parameter) else {
            return "the only parameter allowed after the domain is ;transport=udp, ;transport=tcp or ;transport=tls"
        }
    } else {
        hostPort = rest
    }
    let host: ArraySlice<UInt8>
    var port: ArraySlice<UInt8>?
    if hostPort.first == 0x5B {
        // An IPv6 reference (RFC 3261 §25.1, RFC 5118): `[` hex digits, colons and dots `]`.
        guard let close = hostPort.firstIndex(of: 0x5D) else { return "an IPv6 reference must end with ']'" }
        host = hostPort[hostPort.startIndex...close]
        let inside = hostPort[(hostPort.startIndex + 1)..<close]
        let isIPv6Byte = { (b: UInt8) in (b >= 0x30 && b <= 0x3A) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66) || b == 0x2E }
        guard inside.contains(0x3A), inside.allSatisfy(isIPv6Byte) else { return "the domain's IPv6 reference is not an IPv6 address" }
        let after = hostPort[(close + 1)...]
        if !after.isEmpty {
            guard after.first == 0x3A else { return "expected ':port' after the IPv6 reference" }
            port = after.dropFirst()
        }
    } else if let colon = hostPort.firstIndex(of: 0x3A) {
        host = hostPort[..<colon]
        port = hostPort[(colon + 1)...]
    } else {
        host = hostPort
    }
    guard !host.isEmpty else { return "must name a domain after '@'" }
    if host.first != 0x5B {
        let isHostByte = { (b: UInt8) in (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D || b == 0x2E }
        guard host.allSatisfy(isHostByte) else { return "the domain may contain only A-Z a-z 0-9 - ." }
    }
    if let port {
        guard (1...5).contains(port.count), port.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let value = Int(String(decoding: port, as: UTF8.self)), (1...65535).contains(value) else {
            return "the port must be a number from 1 to 65535"
        }
    }
    return nil
}
