internal import ParleyCrypto
internal import ParleyWireCore

/// Computing and checking MESSAGE-INTEGRITY, MESSAGE-INTEGRITY-SHA256 and FINGERPRINT.
extension STUNMessage {
    /// RFC 8489 §14.7: FINGERPRINT is the CRC-32 XORed with this ("STUN" in ASCII), so it
    /// differs from CRCs other protocols on the same port might carry.
    public static let fingerprintXOR: UInt32 = 0x5354_554E

    // MARK: Signing

    /// The message as bytes with integrity attributes and FINGERPRINT appended, each computed
    /// over the final bytes before it (RFC 8489 §14.5-14.7): for an integrity attribute, the
    /// header's length field first counts up to the end of that attribute; for FINGERPRINT,
    /// up to its end, which is the message's end.
    ///
    /// `integrity` is appended in the order given; put `.sha1` before `.sha256` when sending
    /// both. Throws `misplacedTrailer` if the message already has FINGERPRINT (nothing may
    /// follow it), or already has the integrity attribute asked for (use `removingTrailers()`
    /// first to re-sign); `invalidValue` for a bad SHA-256 length or an oversized message;
    /// `cryptoFailure` if OpenSSL fails.
    public func encoded(addingIntegrity integrity: [STUNIntegrity] = [], fingerprint: Bool = false) throws(STUNError) -> [UInt8] {
        try encodedWithTrailers(integrity: integrity, fingerprint: fingerprint).bytes
    }

    /// This message with the integrity attributes and FINGERPRINT appended, as
    /// `encoded(addingIntegrity:fingerprint:)` computes them.
    public func addingTrailers(integrity: [STUNIntegrity] = [], fingerprint: Bool = false) throws(STUNError) -> STUNMessage {
        var message = self
        message.attributes += try encodedWithTrailers(integrity: integrity, fingerprint: fingerprint).trailers
        return message
    }

    /// This message without its first MESSAGE-INTEGRITY, MESSAGE-INTEGRITY-SHA256 or
    /// FINGERPRINT and everything after it: the part an integrity check covers, ready to be
    /// signed again.
    public func removingTrailers() -> STUNMessage {
        var message = self
        if let first = attributes.firstIndex(where: { Self.trailerTypes.contains($0.type) }) {
            message.attributes.removeSubrange(first...)
        }
        return message
    }

    private static let trailerTypes: Set<STUNAttributeType> = [.messageIntegrity, .messageIntegritySHA256, .fingerprint]

    private func encodedWithTrailers(
        integrity: [STUNIntegrity], fingerprint: Bool
    ) throws(STUNError) -> (bytes: [UInt8], trailers: [STUNAttribute]) {
        var hasSHA1 = attributes.contains { $0.type == .messageIntegrity }
        var hasSHA256 = attributes.contains { $0.type == .messageIntegritySHA256 }
        if attributes.contains(where: { $0.type == .fingerprint }) {
            let reason = "the message already has FINGERPRINT, which must be last"
            if let first = integrity.first { throw STUNError.misplacedTrailer(Self.attributeType(first), reason) }
            if fingerprint { throw STUNError.misplacedTrailer(.fingerprint, reason) }
        }
        for item in integrity {
            switch item {
            case .sha1:
                // After MESSAGE-INTEGRITY-SHA256 a receiver would ignore it (RFC 8489 §14.6).
                guard !hasSHA1, !hasSHA256 else {
                    throw STUNError.misplacedTrailer(.messageIntegrity, "the message already has MESSAGE-INTEGRITY or MESSAGE-INTEGRITY-SHA256")
                }
                hasSHA1 = true
            case .sha256(_, let length):
                guard (16...32).contains(length), length % 4 == 0 else {
                    throw STUNError.invalidValue(.messageIntegritySHA256, "length \(length), expected 16 to 32 in steps of 4")
                }
                guard !hasSHA256 else {
                    throw STUNError.misplacedTrailer(.messageIntegritySHA256, "the message already has MESSAGE-INTEGRITY-SHA256")
                }
                hasSHA256 = true
            }
        }

        var bytes = try encoded()
        var trailers: [STUNAttribute] = []
        func setLength(toInclude valueLength: Int, of type: STUNAttributeType) throws(STUNError) {
            let length = bytes.count - Self.headerLength + 4 + valueLength
            guard length <= 0xFFFF else {
                throw STUNError.invalidValue(type, "the message would be \(length) bytes long, at most 65535 fit")
            }
            bytes[2] = UInt8(length >> 8)
            bytes[3] = UInt8(truncatingIfNeeded: length)
        }
        for item in integrity {
            let type = Self.attributeType(item)
            let (algorithm, key, length): (DigestAlgorithm, STUNIntegrityKey, Int)
            switch item {
            case .sha1(let sha1Key): (algorithm, key, length) = (.sha1, sha1Key, 20)
            case .sha256(let sha256Key, let sha256Length): (algorithm, key, length) = (.sha256, sha256Key, sha256Length)
            }
            try setLength(toInclude: length, of: type)
            let mac: [UInt8]
            do { mac = try Digest.hmac(algorithm, key: key.bytes, bytes) } catch {
                throw STUNError.cryptoFailure(type, error.description)
            }
            let attribute = STUNAttribute(type: type, value: Array(mac.prefix(length)))
            attribute.append(to: &bytes)
            trailers.append(attribute)
        }
        if fingerprint {
            try setLength(toInclude: 4, of: .fingerprint)
            var value: [UInt8] = []
            value.appendUInt32(STUNCRC32.checksum(bytes) ^ Self.fingerprintXOR)
            let attribute = STUNAttribute(type: .fingerprint, value: value)
            attribute.append(to: &bytes)
            trailers.append(attribute)
        }
        return (bytes, trailers)
    }

    private static func attributeType(_ integrity: STUNIntegrity) -> STUNAttributeType {
        switch integrity {
        case .sha1: return .messageIntegrity
        case .sha256: return .messageIntegritySHA256
        }
    }

    // MARK: Checking

    /// Checks MESSAGE-INTEGRITY (HMAC-SHA1, RFC 8489 §14.5) with `key`.
    ///
    /// The HMAC covers the header, with its length field counting up to the end of
    /// MESSAGE-INTEGRITY, and the attributes before it. `.absent` if there is no
    /// MESSAGE-INTEGRITY a receiver would act on (one after MESSAGE-INTEGRITY-SHA256 is
    /// ignored, §14.6). Fails closed: `.invalid` if the HMAC cannot be computed.
    public func verifyMessageIntegrity(key: STUNIntegrityKey) -> STUNVerdict {
        verifyIntegrity(type: .messageIntegrity, algorithm: .sha1, key: key)
    }

    /// Checks MESSAGE-INTEGRITY-SHA256 (RFC 8489 §14.6) with `key`, comparing as many leading
    /// HMAC-SHA256 bytes as the attribute carries (16...32).
    public func verifyMessageIntegritySHA256(key: STUNIntegrityKey) -> STUNVerdict {
        verifyIntegrity(type: .messageIntegritySHA256, algorithm: .sha256, key: key)
    }

    /// Checks FINGERPRINT (RFC 8489 §14.7): `.misplaced` unless it is the last attribute,
    /// `.invalid` unless its value is the CRC-32 of everything before it XOR 0x5354554E.
    public func verifyFingerprint() -> STUNVerdict {
        guard let index = attributes.firstIndex(where: { $0.type == .fingerprint }) else { return .absent }
        guard index == attributes.count - 1 else { return .misplaced }
        let attribute = attributes[index]
        guard attribute.value.count == 4, let covered = try? prefixBytes(upTo: index, lengthField: nil) else { return .invalid }
        let expected = STUNCRC32.checksum(covered) ^ Self.fingerprintXOR
        let carried = attribute.value.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return expected == carried ? .valid : .invalid
    }

    /// All three checks; with no key, a present integrity attribute is `.unchecked`.
    public func verification(key: STUNIntegrityKey?) -> STUNVerification {
        func check(_ type: STUNAttributeType, _ verify: (STUNIntegrityKey) -> STUNVerdict) -> STUNVerdict {
            if let key { return verify(key) }
            return actedOnIndex(of: type) == nil ? .absent : .unchecked
        }
        return STUNVerification(
            messageIntegrity: check(.messageIntegrity, verifyMessageIntegrity(key:)),
            messageIntegritySHA256: check(.messageIntegritySHA256, verifyMessageIntegritySHA256(key:)),
            fingerprint: verifyFingerprint())
    }

    private func verifyIntegrity(type: STUNAttributeType, algorithm: DigestAlgorithm, key: STUNIntegrityKey) -> STUNVerdict {
        guard let index = actedOnIndex(of: type) else { return .absent }
        let carried = attributes[index].value
        let validLength = type == .messageIntegrity
            ? carried.count == 20
            : (16...32).contains(carried.count) && carried.count % 4 == 0
        guard validLength else { return .invalid }
        let lengthField = attributes[..<index].reduce(0) { $0 + $1.encodedLength } + 4 + carried.count
        guard lengthField <= 0xFFFF,
              let covered = try? prefixBytes(upTo: index, lengthField: lengthField),
              let mac = try? Digest.hmac(algorithm, key: key.bytes, covered) else { return .invalid }
        return constantTimeEqual(mac, carried) ? .valid : .invalid
    }

    /// Index of the first attribute of `type` that a receiver acts on.
    func actedOnIndex(of type: STUNAttributeType) -> Int? {
        var ordering = AttributeOrdering()
        for (index, attribute) in attributes.enumerated() where !ordering.isIgnored(attribute.type) {
            if attribute.type == type { return index }
        }
        return nil
    }

    /// Header and the attributes before `index`; the length field is `lengthField`, or the
    /// whole message's when nil.
    private func prefixBytes(upTo index: Int, lengthField: Int?) throws(STUNError) -> [UInt8] {
        let total = try checkedAttributesLength()
        var out: [UInt8] = []
        out.reserveCapacity(Self.headerLength + total)
        appendHeader(length: lengthField ?? total, to: &out)
        for attribute in attributes[..<index] { attribute.append(to: &out) }
        return out
    }
}

/// True if `carried` equals the first `carried.count` bytes of `computed`, in time that
/// depends only on the length, so a forger learns nothing from how long a reject takes.
/// (Concrete arrays rather than `Digest.constantTimeEqual`'s generic collections: this is on
/// every connectivity check's path.)
private func constantTimeEqual(_ computed: [UInt8], _ carried: [UInt8]) -> Bool {
    guard carried.count <= computed.count else { return false }
    var difference: UInt8 = 0
    for index in carried.indices { difference |= computed[index] ^ carried[index] }
    return difference == 0
}
