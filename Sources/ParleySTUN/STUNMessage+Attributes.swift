/// Typed access to the attributes a receiver acts on.
///
/// RFC 8489 §14.5-14.7: attributes after MESSAGE-INTEGRITY other than
/// MESSAGE-INTEGRITY-SHA256 and FINGERPRINT, after MESSAGE-INTEGRITY-SHA256 other than
/// FINGERPRINT, and after FINGERPRINT are ignored; they stay in `attributes` (so the message
/// re-encodes exactly) but the accessors here never return them. Of repeated attributes the
/// first counts (RFC 8489 §14).
extension STUNMessage {
    /// True if a receiver ignores `attributes[index]` because of where it is.
    public func isIgnored(attributeAt index: Int) -> Bool {
        ignoredFlags()[index]
    }

    /// The attributes a receiver acts on, in order.
    public var processedAttributes: [STUNAttribute] {
        zip(attributes, ignoredFlags()).filter { !$0.1 }.map(\.0)
    }

    func ignoredFlags() -> [Bool] {
        var ordering = AttributeOrdering()
        return attributes.map { ordering.isIgnored($0.type) }
    }

    /// The typed value of the first processed attribute of `type`; nil if there is none or
    /// (only possible for a message built by hand) it is malformed.
    public func value(of type: STUNAttributeType) -> STUNAttributeValue? {
        guard let index = actedOnIndex(of: type) else { return nil }
        return try? attributes[index].decoded(transactionID: transactionID)
    }

    /// Comprehension-required attribute types (0x0000-0x7FFF) among the processed attributes
    /// that this module does not decode, in order of appearance, without repeats. A server
    /// receiving a request with any must answer 420 with them in UNKNOWN-ATTRIBUTES
    /// (RFC 8489 §6.3.1.1).
    public var unknownComprehensionRequired: [STUNAttributeType] {
        unknownComprehensionRequired(understanding: [])
    }

    /// As `unknownComprehensionRequired`, also counting `understood` types (ones the caller
    /// handles from their raw bytes) as known.
    public func unknownComprehensionRequired(understanding understood: Set<STUNAttributeType>) -> [STUNAttributeType] {
        var seen: Set<STUNAttributeType> = []
        var unknown: [STUNAttributeType] = []
        for attribute in processedAttributes where attribute.type.isComprehensionRequired {
            let type = attribute.type
            if STUNAttributeType.decodedTypes.contains(type) || understood.contains(type) || seen.contains(type) { continue }
            seen.insert(type)
            unknown.append(type)
        }
        return unknown
    }

    /// XOR-MAPPED-ADDRESS, un-XORed.
    public var xorMappedAddress: STUNTransportAddress? {
        if case .xorMappedAddress(let address)? = value(of: .xorMappedAddress) { return address }
        return nil
    }

    /// MAPPED-ADDRESS.
    public var mappedAddress: STUNTransportAddress? {
        if case .mappedAddress(let address)? = value(of: .mappedAddress) { return address }
        return nil
    }

    /// USERNAME.
    public var username: String? {
        if case .username(let text)? = value(of: .username) { return text }
        return nil
    }

    /// PRIORITY (ICE).
    public var priority: UInt32? {
        if case .priority(let priority)? = value(of: .priority) { return priority }
        return nil
    }

    /// True if USE-CANDIDATE is present (ICE nomination).
    public var useCandidate: Bool {
        value(of: .useCandidate) == .useCandidate
    }

    /// The tie-breaker of ICE-CONTROLLING.
    public var iceControlling: UInt64? {
        if case .iceControlling(let tieBreaker)? = value(of: .iceControlling) { return tieBreaker }
        return nil
    }

    /// The tie-breaker of ICE-CONTROLLED.
    public var iceControlled: UInt64? {
        if case .iceControlled(let tieBreaker)? = value(of: .iceControlled) { return tieBreaker }
        return nil
    }

    /// ERROR-CODE.
    public var errorCode: STUNErrorCode? {
        if case .errorCode(let error)? = value(of: .errorCode) { return error }
        return nil
    }

    /// UNKNOWN-ATTRIBUTES.
    public var unknownAttributes: [STUNAttributeType]? {
        if case .unknownAttributes(let types)? = value(of: .unknownAttributes) { return types }
        return nil
    }

    /// SOFTWARE.
    public var software: String? {
        if case .software(let text)? = value(of: .software) { return text }
        return nil
    }

    /// REALM.
    public var realm: String? {
        if case .realm(let text)? = value(of: .realm) { return text }
        return nil
    }

    /// NONCE.
    public var nonce: String? {
        if case .nonce(let text)? = value(of: .nonce) { return text }
        return nil
    }
}
