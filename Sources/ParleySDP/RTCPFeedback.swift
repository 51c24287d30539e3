/// `a=rtcp-fb:<payload type or *> <type> [<parameters>]` (RFC 4585 §4.2), e.g.
/// `a=rtcp-fb:111 transport-cc` or `a=rtcp-fb:96 nack pli`.
public struct RTCPFeedback: SDPAttributeValue {
    public static let attributeName = "rtcp-fb"

    /// The payload type it applies to; nil for `*` (every payload type).
    public var payloadType: UInt8?
    /// `nack`, `ack`, `ccm`, `trr-int`, `transport-cc`, `goog-remb`, ...
    public var type: String
    /// The rest of the line (`pli`, `fir`, ...), if any.
    public var parameter: String?

    public init(payloadType: UInt8?, type: String, parameter: String? = nil) {
        self.payloadType = payloadType
        self.type = type
        self.parameter = parameter
    }

    public init(attributeValue: String) throws(SDPError) {
        let fields = SDPText.looseFields(Substring(attributeValue))
        guard fields.count >= 2 else {
            throw .malformed(Self.self, "expected <payload type> <type> [<parameter>], found \(SDPText.quote(attributeValue))")
        }
        var payloadType: UInt8? = nil
        if fields[0] != "*" {
            guard let number = SDPText.decimal(fields[0], as: UInt8.self), number <= 127 else {
                throw .malformed(Self.self, "payload type \(SDPText.quote(fields[0])) is neither * nor a number 0-127")
            }
            payloadType = number
        }
        self.init(payloadType: payloadType, type: String(fields[1]),
                  parameter: fields.count > 2 ? fields[2...].joined(separator: " ") : nil)
    }

    public var attributeValue: String {
        var out = (payloadType.map { String($0) } ?? "*") + " " + type
        if let parameter { out += " " + parameter }
        return out
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(payloadType, forKey: .payloadType)
        try c.encode(type, forKey: .type)
        try c.encode(parameter, forKey: .parameter)
    }

    private enum CodingKeys: String, CodingKey { case payloadType, type, parameter }
}
