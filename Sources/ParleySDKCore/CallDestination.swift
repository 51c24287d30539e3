import ParleySignaling

/// The checks `callPhoneNumber` and `callSIP` make before anything is placed, so a bad
/// number, address or header fails at once with a clear `invalid_argument` rather than
/// as the server's `bad_request` after the call object was handed out.
enum CallDestination {
    /// `number` as a phone destination: E.164 with its leading `+` (the protocol's rule).
    static func phoneNumber(_ number: String) throws(ParleyClientError) -> SignalingMessage.Address {
        let address = SignalingMessage.Address.phone(number)
        if let problem = address.formatProblem {
            throw ParleyClientError(code: "invalid_argument", message: "phone number \(shown(number)) is not valid: \(problem)")
        }
        return address
    }

    /// `text` as a SIP destination: `user@domain[:port][;transport=udp|tcp|tls]`, optionally
    /// written as a `sip:` URI, or after `sips:` (SIP over TLS all the way). The call's
    /// remote id is the address without `sip:`; `sips:` stays, since it asks for TLS.
    static func sipAddress(_ text: String) throws(ParleyClientError) -> SignalingMessage.Address {
        var address = Substring(text)
        var scheme = ""
        if text.lowercased().hasPrefix("sips:") {
            address = address.dropFirst(5)
            scheme = "sips:"
        } else if text.lowercased().hasPrefix("sip:") {
            address = address.dropFirst(4)
        }
        // Only the short form is accepted from apps: a full URI would reach the SIP stack
        // unchecked (the protocol's rule checks a URI only for having a scheme).
        guard let at = address.firstIndex(of: "@"), !address[..<at].contains(":") else {
            throw ParleyClientError(code: "invalid_argument", message: "SIP address \(shown(text)) must be user@domain[:port][;transport=udp|tcp|tls], optionally after sip: or sips:")
        }
        let sip = SignalingMessage.Address.sip(scheme + String(address))
        if let problem = sip.formatProblem {
            throw ParleyClientError(code: "invalid_argument", message: "SIP address \(shown(text)) is not valid: \(problem)")
        }
        return sip
    }

    /// `id` as a conference destination: 1-64 characters of `A-Z a-z 0-9 - _ =` (the
    /// protocol's rule; Sinch documents the 64).
    static func conference(_ id: String) throws(ParleyClientError) -> SignalingMessage.Address {
        let address = SignalingMessage.Address.conference(id)
        if let problem = address.formatProblem {
            throw ParleyClientError(code: "invalid_argument", message: "conference id \(shown(id)) is not valid: \(problem)")
        }
        return address
    }

    /// Headers of a call to a SIP endpoint or phone number travel as SIP headers on the
    /// INVITE, so each must be a custom one: named `x-` (any case) and more.
    static func checkSIPHeaders(_ headers: [String: String]) throws(ParleyClientError) {
        for name in headers.keys.sorted() where !(name.utf8.count > 2 && name.lowercased().hasPrefix("x-")) {
            throw ParleyClientError(code: "invalid_argument", message: "header \(shown(name)): calls to SIP addresses and phone numbers take only custom headers named x-... (they travel as SIP headers)")
        }
    }

    /// `text` quoted for a message, cut at 64 characters: it came from the app and may be long.
    private static func shown(_ text: String) -> String {
        "\"" + (text.count > 64 ? String(text.prefix(64)) + "\u{2026}" : text) + "\""
    }
}
