internal import ParleySTUN

/// The checks every ICE agent applies to an incoming datagram before acting on it as a
/// connectivity check, shared by the lite and the full agent.
///
/// Order (RFC 8489 §6.3, §9.1.3; RFC 8445 §7.3):
/// 1. not STUN -> drop; FINGERPRINT missing or wrong -> drop (RFC 8445 §7.1 requires it);
/// 2. not a Binding request -> handed back to the caller (responses) or dropped;
/// 3. USERNAME or MESSAGE-INTEGRITY missing -> 400, unsigned;
/// 4. USERNAME not `localUfrag:remoteUfrag` -> 401, unsigned (RFC 8445 §7.3; RFC 8489 §9.1.3);
/// 5. MESSAGE-INTEGRITY wrong under the local password -> 401, unsigned;
/// 6. unknown comprehension-required attributes -> 420 with UNKNOWN-ATTRIBUTES, signed
///    (RFC 8489 §6.3.1.1; authentication comes first so the answer can be signed).
/// Role conflicts (487) depend on the agent and are left to it.
enum ICERequestScreen {
    enum Outcome {
        /// A well-formed, authenticated Binding request.
        case request(STUNMessage)
        /// A Binding success or error response with a valid FINGERPRINT (not yet authenticated).
        case response(STUNMessage)
        /// Answer with these bytes and do nothing else.
        case reject([UInt8])
        case drop(ICEDropReason)
    }

    static func screen(
        _ bytes: [UInt8], local: ICECredentials, remoteUfrag: String?
    ) -> Outcome {
        guard let message = try? STUNMessage(decoding: bytes) else { return .drop(.notSTUN) }
        guard message.verifyFingerprint() == .valid else { return .drop(.badFingerprint) }
        guard message.method == .binding else { return .drop(.unsupportedMessage) }
        switch message.messageClass {
        case .success, .error: return .response(message)
        case .indication: return .drop(.unsupportedMessage)
        case .request: break
        }
        let integrity = message.verifyMessageIntegrity(key: local.key)
        guard let username = message.username, integrity != .absent else {
            return .reject(errorResponse(to: message, .badRequest, key: nil))
        }
        // RFC 8445 §7.3: the part before the colon is ours; the part after, the peer's
        // (checked when its ufrag is known, i.e. once the remote SDP has arrived).
        let expectedPrefix = local.ufrag + ":"
        let validUsername: Bool
        if let remoteUfrag {
            validUsername = username == expectedPrefix + remoteUfrag
        } else {
            validUsername = username.hasPrefix(expectedPrefix) && username.count > expectedPrefix.count
        }
        guard validUsername, integrity == .valid else {
            return .reject(errorResponse(to: message, .unauthenticated, key: nil))
        }
        let unknown = message.unknownComprehensionRequired
        guard unknown.isEmpty else {
            return .reject(errorResponse(to: message, .unknownAttribute, key: local.key, unknownAttributes: unknown))
        }
        return .request(message)
    }

    /// An error response; signed with `key` when the request was authenticated (RFC 8489
    /// §9.1.3 forbids MESSAGE-INTEGRITY on 400/401 answers), always with FINGERPRINT.
    static func errorResponse(
        to request: STUNMessage, _ error: STUNErrorCode, key: STUNIntegrityKey?, unknownAttributes: [STUNAttributeType] = []
    ) -> [UInt8] {
        var response = STUNMessage(class: .error, method: .binding, transactionID: request.transactionID)
        // The codes and reasons are the fixed ones from STUNErrorCode and the attribute list
        // comes from a parsed message, so appending cannot fail; if it ever did, an answer
        // without the attribute is still better than none.
        try? response.append(.errorCode(error))
        if !unknownAttributes.isEmpty { try? response.append(.unknownAttributes(unknownAttributes)) }
        let integrity: [STUNIntegrity] = key.map { [.sha1(key: $0)] } ?? []
        return (try? response.encoded(addingIntegrity: integrity, fingerprint: true)) ?? []
    }

    /// RFC 8445 §7.3.1.2: a success response carrying the request's source in
    /// XOR-MAPPED-ADDRESS, signed with the local password.
    static func successResponse(to request: STUNMessage, source: ICETransportAddress, key: STUNIntegrityKey) -> [UInt8] {
        var response = STUNMessage(class: .success, method: .binding, transactionID: request.transactionID)
        try? response.append(.xorMappedAddress(source))
        return (try? response.encoded(addingIntegrity: [.sha1(key: key)], fingerprint: true)) ?? []
    }
}
