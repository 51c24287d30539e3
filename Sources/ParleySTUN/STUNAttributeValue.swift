internal import ParleyWireCore

/// The typed meaning of one STUN attribute: what `STUNAttribute.decoded(transactionID:)`
/// returns and what `STUNMessage.append(_:)` takes.
///
/// Covers the attributes ICE needs (RFC 8489 §14, RFC 8445 §7.1); anything else is `.other`.
public enum STUNAttributeValue: Sendable, Hashable, Encodable {
    /// MAPPED-ADDRESS (RFC 8489 §14.1), the address in the clear; kept for RFC 3489 era servers.
    case mappedAddress(STUNTransportAddress)
    /// XOR-MAPPED-ADDRESS (RFC 8489 §14.2): the reflexive address, already un-XORed.
    case xorMappedAddress(STUNTransportAddress)
    /// USERNAME (RFC 8489 §14.3). ICE: `remoteUfrag:localUfrag` (RFC 8445 §7.2.2).
    case username(String)
    /// MESSAGE-INTEGRITY (RFC 8489 §14.5): the 20-byte HMAC-SHA1.
    case messageIntegrity([UInt8])
    /// MESSAGE-INTEGRITY-SHA256 (RFC 8489 §14.6): HMAC-SHA256, possibly truncated to 16...32
    /// bytes in steps of 4.
    case messageIntegritySHA256([UInt8])
    /// FINGERPRINT (RFC 8489 §14.7): CRC-32 of the message before it, XOR 0x5354554E.
    case fingerprint(UInt32)
    /// ERROR-CODE (RFC 8489 §14.8).
    case errorCode(STUNErrorCode)
    /// UNKNOWN-ATTRIBUTES (RFC 8489 §14.13): the types a 420 response did not understand.
    case unknownAttributes([STUNAttributeType])
    /// PRIORITY (RFC 8445 §7.1.1).
    case priority(UInt32)
    /// USE-CANDIDATE (RFC 8445 §7.1.2): no value.
    case useCandidate
    /// ICE-CONTROLLING (RFC 8445 §7.1.3) with its tie-breaker.
    case iceControlling(tieBreaker: UInt64)
    /// ICE-CONTROLLED (RFC 8445 §7.1.3) with its tie-breaker.
    case iceControlled(tieBreaker: UInt64)
    /// SOFTWARE (RFC 8489 §14.14).
    case software(String)
    /// REALM (RFC 8489 §14.9).
    case realm(String)
    /// NONCE (RFC 8489 §14.10).
    case nonce(String)
    /// Any attribute this module does not decode, as raw bytes. Meant for types outside
    /// `STUNAttributeType.decodedTypes`; bytes given here for a decoded type are written as
    /// they are, and the message will not parse back if they are malformed.
    case other(type: STUNAttributeType, value: [UInt8])

    /// The attribute type this value is carried in.
    public var type: STUNAttributeType {
        switch self {
        case .mappedAddress: return .mappedAddress
        case .xorMappedAddress: return .xorMappedAddress
        case .username: return .username
        case .messageIntegrity: return .messageIntegrity
        case .messageIntegritySHA256: return .messageIntegritySHA256
        case .fingerprint: return .fingerprint
        case .errorCode: return .errorCode
        case .unknownAttributes: return .unknownAttributes
        case .priority: return .priority
        case .useCandidate: return .useCandidate
        case .iceControlling: return .iceControlling
        case .iceControlled: return .iceControlled
        case .software: return .software
        case .realm: return .realm
        case .nonce: return .nonce
        case .other(let type, _): return type
        }
    }

    // MARK: Limits

    /// RFC 8489 §14.3: senders use fewer than 509 bytes of USERNAME.
    static let maxUsernameBytesToSend = 508
    /// RFC 8489 §14.3, §14.8-14.10, §14.14: receivers accept up to 763 bytes (RFC 5389 compatibility).
    static let maxTextBytesToAccept = 763
    /// RFC 8489 §14.8-14.10, §14.14: fewer than 128 characters.
    static let maxTextCharactersToSend = 127

    // MARK: Decoding

    /// Decodes `value` as an attribute of `type`. `offset` is where the attribute starts in
    /// its message, for error messages (nil outside a message).
    static func decode(
        type: STUNAttributeType, value: ArraySlice<UInt8>, transactionID: STUNTransactionID, offset: Int?
    ) throws(STUNError) -> STUNAttributeValue {
        func malformed(_ reason: String) -> STUNError { STUNError.malformedAttribute(type, offset: offset, reason) }
        func exactLength(_ expected: Int) throws(STUNError) {
            guard value.count == expected else { throw malformed("length \(value.count), expected \(expected)") }
        }
        func text(maxBytes: Int) throws(STUNError) -> String {
            guard value.count <= maxBytes else { throw malformed("\(value.count) bytes, at most \(maxBytes) allowed") }
            guard let string = UTF8Validator.string(value) else { throw malformed("not valid UTF-8") }
            return string
        }
        let base = value.startIndex
        switch type {
        case .mappedAddress:
            return .mappedAddress(try decodeAddress(value, xorWith: nil, malformed: malformed))
        case .xorMappedAddress:
            return .xorMappedAddress(try decodeAddress(value, xorWith: transactionID, malformed: malformed))
        case .username:
            return .username(try text(maxBytes: maxTextBytesToAccept))
        case .messageIntegrity:
            try exactLength(20)
            return .messageIntegrity(Array(value))
        case .messageIntegritySHA256:
            guard (16...32).contains(value.count), value.count % 4 == 0 else {
                throw malformed("length \(value.count), expected 16 to 32 in steps of 4")
            }
            return .messageIntegritySHA256(Array(value))
        case .fingerprint:
            try exactLength(4)
            return .fingerprint(readUInt32(value, at: base))
        case .errorCode:
            // RFC 8489 §14.8: 21 reserved bits, 3-bit class, 8-bit number, reason phrase.
            guard value.count >= 4 else { throw malformed("length \(value.count), expected at least 4") }
            let errorClass = Int(value[base + 2] & 0x07)
            let number = Int(value[base + 3])
            guard (3...6).contains(errorClass) else { throw malformed("class \(errorClass), expected 3 to 6") }
            guard number <= 99 else { throw malformed("number \(number), expected 0 to 99") }
            let reasonBytes = value.dropFirst(4)
            guard reasonBytes.count <= maxTextBytesToAccept else {
                throw malformed("reason phrase of \(reasonBytes.count) bytes, at most \(maxTextBytesToAccept) allowed")
            }
            guard let reason = UTF8Validator.string(reasonBytes) else { throw malformed("reason phrase is not valid UTF-8") }
            return .errorCode(STUNErrorCode(code: errorClass * 100 + number, reason: reason))
        case .unknownAttributes:
            guard value.count % 2 == 0 else { throw malformed("odd length \(value.count), expected a list of 16-bit types") }
            var types: [STUNAttributeType] = []
            types.reserveCapacity(value.count / 2)
            var index = base
            while index < value.endIndex {
                types.append(STUNAttributeType(UInt16(value[index]) << 8 | UInt16(value[index + 1])))
                index += 2
            }
            return .unknownAttributes(types)
        case .priority:
            try exactLength(4)
            return .priority(readUInt32(value, at: base))
        case .useCandidate:
            try exactLength(0)
            return .useCandidate
        case .iceControlling:
            try exactLength(8)
            return .iceControlling(tieBreaker: readUInt64(value, at: base))
        case .iceControlled:
            try exactLength(8)
            return .iceControlled(tieBreaker: readUInt64(value, at: base))
        case .software:
            return .software(try text(maxBytes: maxTextBytesToAccept))
        case .realm:
            return .realm(try text(maxBytes: maxTextBytesToAccept))
        case .nonce:
            return .nonce(try text(maxBytes: maxTextBytesToAccept))
        default:
            return .other(type: type, value: Array(value))
        }
    }

    //  0                   1                   2                   3
    //  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
    // +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    // |0 0 0 0 0 0 0 0|    Family     |         (X-)Port              |
    // +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    // |                 (X-)Address (32 bits or 128 bits)             |
    // +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    // RFC 8489 §14.1-14.2. The first byte is reserved and ignored on receipt. With XOR, the
    // port is XORed with the cookie's top 16 bits, IPv4 with the cookie, IPv6 with the
    // cookie followed by the transaction ID.
    private static func decodeAddress(
        _ value: ArraySlice<UInt8>, xorWith transactionID: STUNTransactionID?, malformed: (String) -> STUNError
    ) throws(STUNError) -> STUNTransportAddress {
        guard value.count >= 4 else { throw malformed("length \(value.count), expected 8 (IPv4) or 20 (IPv6)") }
        let base = value.startIndex
        let family = value[base + 1]
        let expected: Int
        switch family {
        case 0x01: expected = 8
        case 0x02: expected = 20
        default: throw malformed("unknown address family 0x\(hexByte(family))")
        }
        guard value.count == expected else {
            throw malformed("length \(value.count), expected \(expected) for address family 0x\(hexByte(family))")
        }
        var port = UInt16(value[base + 2]) << 8 | UInt16(value[base + 3])
        if transactionID != nil { port ^= UInt16(STUNMessage.magicCookie >> 16) }
        if family == 0x01 {
            var address = readUInt32(value, at: base + 4)
            if transactionID != nil { address ^= STUNMessage.magicCookie }
            return STUNTransportAddress(ip: .ipv4(address), port: port)
        }
        var high = readUInt64(value, at: base + 4)
        var low = readUInt64(value, at: base + 12)
        if let transactionID {
            let mask = xorMask(transactionID)
            high ^= mask.high
            low ^= mask.low
        }
        return STUNTransportAddress(ip: .ipv6(high: high, low: low), port: port)
    }

    /// The 128 bits an IPv6 address is XORed with: magic cookie, then transaction ID.
    private static func xorMask(_ transactionID: STUNTransactionID) -> (high: UInt64, low: UInt64) {
        (UInt64(STUNMessage.magicCookie) << 32 | UInt64(transactionID.high), transactionID.low)
    }

    private static func readUInt32(_ bytes: ArraySlice<UInt8>, at index: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[index + $1]) }
    }

    private static func readUInt64(_ bytes: ArraySlice<UInt8>, at index: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[index + $1]) }
    }

    // MARK: Encoding

    /// The wire value bytes (without padding), after checking the value is in range.
    func encodedValue(transactionID: STUNTransactionID) throws(STUNError) -> [UInt8] {
        let type = self.type
        func invalid(_ reason: String) -> STUNError { STUNError.invalidValue(type, reason) }
        func checkedText(_ string: String) throws(STUNError) -> [UInt8] {
            let count = string.unicodeScalars.count
            guard count <= Self.maxTextCharactersToSend else {
                throw invalid("\(count) characters, fewer than 128 allowed")
            }
            return Array(string.utf8)
        }
        var out: [UInt8] = []
        switch self {
        case .mappedAddress(let address):
            Self.encodeAddress(address, xorWith: nil, into: &out)
        case .xorMappedAddress(let address):
            Self.encodeAddress(address, xorWith: transactionID, into: &out)
        case .username(let name):
            out = Array(name.utf8)
            guard out.count <= Self.maxUsernameBytesToSend else {
                throw invalid("\(out.count) bytes, fewer than 509 allowed")
            }
        case .messageIntegrity(let mac):
            guard mac.count == 20 else { throw invalid("\(mac.count) bytes, expected 20") }
            out = mac
        case .messageIntegritySHA256(let mac):
            guard (16...32).contains(mac.count), mac.count % 4 == 0 else {
                throw invalid("\(mac.count) bytes, expected 16 to 32 in steps of 4")
            }
            out = mac
        case .fingerprint(let crc):
            out.appendUInt32(crc)
        case .errorCode(let error):
            guard (300...699).contains(error.code) else { throw invalid("code \(error.code), expected 300 to 699") }
            out.appendUInt16(0)
            out.append(UInt8(error.errorClass))
            out.append(UInt8(error.number))
            out += try checkedText(error.reason)
        case .unknownAttributes(let types):
            guard types.count <= 0x7FFF else { throw invalid("\(types.count) types do not fit in one attribute") }
            for unknown in types { out.appendUInt16(unknown.rawValue) }
        case .priority(let priority):
            out.appendUInt32(priority)
        case .useCandidate:
            break
        case .iceControlling(let tieBreaker), .iceControlled(let tieBreaker):
            out.appendUInt64(tieBreaker)
        case .software(let text), .realm(let text), .nonce(let text):
            out = try checkedText(text)
        case .other(_, let value):
            guard value.count <= 0xFFFF else { throw invalid("\(value.count) bytes, at most 65535 allowed") }
            out = value
        }
        return out
    }

    private static func encodeAddress(_ address: STUNTransportAddress, xorWith transactionID: STUNTransactionID?, into out: inout [UInt8]) {
        out.append(0)
        out.append(address.ip.family)
        let xor = transactionID != nil
        out.appendUInt16(xor ? address.port ^ UInt16(STUNMessage.magicCookie >> 16) : address.port)
        switch address.ip {
        case .ipv4(let value):
            out.appendUInt32(xor ? value ^ STUNMessage.magicCookie : value)
        case .ipv6(let high, let low):
            let mask = transactionID.map(xorMask) ?? (high: 0, low: 0)
            out.appendUInt64(high ^ mask.high)
            out.appendUInt64(low ^ mask.low)
        }
    }

    // MARK: JSON

    private enum CodingKeys: String, CodingKey {
        case text, hmac, crc32, types, priority, tieBreaker, code, reason, type, value
    }

    /// One object per kind, e.g. `{"text": "evtj:h6vY"}`, `{"priority": 1845494271}`,
    /// `{"tieBreaker": "932ff9b151263b36"}`, or the address object for address attributes.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .mappedAddress(let address), .xorMappedAddress(let address):
            try address.encode(to: encoder)
        case .errorCode(let error):
            try error.encode(to: encoder)
        default:
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .username(let text), .software(let text), .realm(let text), .nonce(let text):
                try container.encode(text, forKey: .text)
            case .messageIntegrity(let mac), .messageIntegritySHA256(let mac):
                try container.encode(Hex.encode(mac), forKey: .hmac)
            case .fingerprint(let crc):
                try container.encode(hex32(crc), forKey: .crc32)
            case .unknownAttributes(let types):
                try container.encode(types, forKey: .types)
            case .priority(let priority):
                try container.encode(priority, forKey: .priority)
            case .iceControlling(let tieBreaker), .iceControlled(let tieBreaker):
                try container.encode(hex32(UInt32(truncatingIfNeeded: tieBreaker >> 32)) + hex32(UInt32(truncatingIfNeeded: tieBreaker)), forKey: .tieBreaker)
            case .other(let type, let value):
                try container.encode(type, forKey: .type)
                try container.encode(Hex.encode(value), forKey: .value)
            case .useCandidate, .mappedAddress, .xorMappedAddress, .errorCode:
                break
            }
        }
    }
}
