import ParleySTUN

/// A STUN message with its integrity and fingerprint verdicts added as `verification`,
/// at the same level as the message's own fields.
private struct InspectedSTUNMessage: Encodable {
    let message: STUNMessage
    let verification: STUNVerification

    enum CodingKeys: String, CodingKey { case verification }

    func encode(to encoder: any Encoder) throws {
        try message.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(verification, forKey: .verification)
    }
}

extension InspectFormat {
    func inspectSTUN(_ input: [UInt8], password: String?) throws(InspectCommand.Failure) -> String {
        let message: STUNMessage
        do { message = try STUNMessage(decoding: input) } catch { throw .invalid(.stun, error) }
        let key = password.map { STUNIntegrityKey.shortTerm(password: $0) }
        return try InspectCommand.json(InspectedSTUNMessage(message: message, verification: message.verification(key: key)))
    }
}
