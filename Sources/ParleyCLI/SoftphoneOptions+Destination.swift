import ParleyAuth
import ParleySDK
import ParleySignaling

/// `parley call`'s destination: a user id, a phone number or a SIP address, written as
/// the positional argument (its form says which) or with `--phone` / `--sip`.
extension SoftphoneOptions {
    /// The kind a positional destination's form names: `+...` a phone number, `sip:...`,
    /// `sips:...` or anything with an `@` a SIP address, else a user id.
    static func calleeKind(of destination: String) -> ParleyCallRemoteKind {
        let lower = destination.lowercased()
        if destination.hasPrefix("+") { return .phone }
        if lower.hasPrefix("sip:") || lower.hasPrefix("sips:") || destination.contains("@") { return .sip }
        return .user
    }

    /// The one destination among the positional arguments, `--phone` and `--sip`, checked.
    static func callMode(positional: [String], phone: String?, sip: String?) throws(SoftphoneUsageError) -> Mode {
        let given = positional.map { ($0, calleeKind(of: $0)) } + (phone.map { [($0, ParleyCallRemoteKind.phone)] } ?? [])
            + (sip.map { [($0, ParleyCallRemoteKind.sip)] } ?? [])
        guard let (destination, kind) = given.first else {
            throw SoftphoneUsageError("missing the user to call: parley call <user | +number | user@domain> --server URL ... (or --phone, --sip)")
        }
        guard given.count == 1 else {
            if phone == nil, sip == nil {
                throw SoftphoneUsageError("one user to call, not \(positional.count) ('\(positional.joined(separator: "', '"))')")
            }
            throw SoftphoneUsageError("one destination to call: a user, --phone NUMBER or --sip ADDRESS, not \(given.count)")
        }
        switch kind {
        case .user:
            guard UserToken.isValidUserID(destination) else {
                throw SoftphoneUsageError("user to call '\(destination)' is not a user id (1-255 bytes of A-Z a-z 0-9 - _ =)")
            }
            return .call(callee: destination)
        case .phone:
            if let problem = SignalingMessage.Address.phone(destination).formatProblem {
                throw SoftphoneUsageError("phone number '\(destination)' is not valid: \(problem)")
            }
            return .call(callee: destination, kind: .phone)
        case .sip, .conference:
            return .call(callee: try sipAddress(destination), kind: .sip)
        }
    }

    /// `parley conference ROOM`'s one conference id, checked by the protocol's rule.
    static func conferenceMode(positional: [String], phone: String?, sip: String?) throws(SoftphoneUsageError) -> Mode {
        guard phone == nil, sip == nil else { throw SoftphoneUsageError("parley conference joins a room: no --phone or --sip") }
        guard positional.count == 1, let room = positional.first else {
            throw SoftphoneUsageError(positional.isEmpty
                ? "missing the conference to join: parley conference ROOM --server URL ..."
                : "one conference to join, not \(positional.count) ('\(positional.joined(separator: "', '"))')")
        }
        if let problem = SignalingMessage.Address.conference(room).formatProblem {
            throw SoftphoneUsageError("conference id '\(room)' is not valid: \(problem)")
        }
        return .call(callee: room, kind: .conference)
    }

    /// `user@domain[:port][;transport=udp|tcp|tls]`, optionally after `sip:` (dropped) or
    /// `sips:` (kept: TLS all the way): the form `ParleyCallClient.callSIP` takes.
    static func sipAddress(_ text: String) throws(SoftphoneUsageError) -> String {
        let lower = text.lowercased()
        let scheme = lower.hasPrefix("sips:") ? "sips:" : ""
        let address = lower.hasPrefix("sips:") ? String(text.dropFirst(5)) : lower.hasPrefix("sip:") ? String(text.dropFirst(4)) : text
        guard let at = address.firstIndex(of: "@"), !address[..<at].contains(":") else {
            throw SoftphoneUsageError("SIP address '\(text)' must be user@domain[:port][;transport=udp|tcp|tls], optionally after sip: or sips:")
        }
        if let problem = SignalingMessage.Address.sip(address).formatProblem {
            throw SoftphoneUsageError("SIP address '\(text)' is not valid: \(problem)")
        }
        return scheme + address
    }

    /// Headers toward a phone number or SIP address go on the INVITE: custom ones only.
    static func validateSIPHeaders(_ headers: [String: String]) throws(SoftphoneUsageError) {
        for name in headers.keys.sorted() where !(name.utf8.count > 2 && name.lowercased().hasPrefix("x-")) {
            throw SoftphoneUsageError("--header \(name): calls to phone numbers and SIP addresses take only headers named x-... (they travel as SIP headers)")
        }
    }

    /// `--cli`: an E.164 number, the caller id shown on phone calls.
    static func parseCLI(_ text: String) throws(SoftphoneUsageError) -> String {
        if let problem = SignalingMessage.Address.phone(text).formatProblem {
            throw SoftphoneUsageError("--cli '\(text)' is not a caller id: \(problem)")
        }
        return text
    }
}
