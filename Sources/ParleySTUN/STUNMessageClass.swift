/// The class of a STUN message (RFC 8489 §5): two bits spread over the message type.
public enum STUNMessageClass: UInt8, Sendable, Hashable, CaseIterable, Encodable, CustomStringConvertible {
    /// A request, answered by a success or error response.
    case request = 0b00
    /// An indication: no response.
    case indication = 0b01
    /// A success response.
    case success = 0b10
    /// An error response, carrying ERROR-CODE.
    case error = 0b11

    public var description: String {
        switch self {
        case .request: return "request"
        case .indication: return "indication"
        case .success: return "success"
        case .error: return "error"
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
