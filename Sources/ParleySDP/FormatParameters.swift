/// `a=fmtp:<format> <format specific parameters>` (RFC 8866 §6.15), with the
/// parameters read as the usual `key=value;key=value` list (RFC 7587 §7 for Opus).
/// A parameter without `=` (telephone-event's `0-15`, RED's `111/111`) has no value.
public struct FormatParameters: SDPAttributeValue {
    public static let attributeName = "fmtp"

    /// One `key=value` (or bare `key`) item.
    public struct Parameter: Sendable, Hashable, Encodable {
        public var name: String
        public var value: String?

        public init(name: String, value: String? = nil) {
            self.name = name
            self.value = value
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(name, forKey: .name)
            try c.encode(value, forKey: .value)
        }

        private enum CodingKeys: String, CodingKey { case name, value }
    }

    /// The format the parameters apply to: an RTP payload type number for RTP media.
    public var format: String
    /// The parameters in order.
    public var parameters: [Parameter]

    public init(format: String, parameters: [Parameter]) {
        self.format = format
        self.parameters = parameters
    }

    public init(payloadType: UInt8, parameters: [Parameter]) {
        self.init(format: String(payloadType), parameters: parameters)
    }

    public init(attributeValue: String) throws(SDPError) {
        guard let space = SDPText.firstIndex(of: UInt8(ascii: " "), in: attributeValue) else {
            throw .malformed(Self.self, "expected <format> <parameters>, found \(SDPText.quote(attributeValue))")
        }
        let format = SDPText.before(space, in: attributeValue)
        guard SDPText.isNonSpaceText(format) else {
            throw .malformed(Self.self, "empty format")
        }
        var parameters: [Parameter] = []
        for item in SDPText.split(SDPText.after(space, in: attributeValue), on: UInt8(ascii: ";")) {
            let text = SDPText.trimmingSpaces(item)
            if text.isEmpty { continue }
            if let equals = SDPText.firstIndex(of: UInt8(ascii: "="), in: text) {
                parameters.append(Parameter(name: String(SDPText.before(equals, in: text)), value: String(SDPText.after(equals, in: text))))
            } else {
                parameters.append(Parameter(name: String(text)))
            }
        }
        self.init(format: String(format), parameters: parameters)
    }

    public var attributeValue: String {
        format + " " + parameters.map { p in p.value.map { p.name + "=" + $0 } ?? p.name }.joined(separator: ";")
    }

    /// The format as an RTP payload type, when it is one.
    public var payloadType: UInt8? {
        SDPText.decimal(Substring(format), as: UInt8.self).flatMap { $0 <= 127 ? $0 : nil }
    }

    /// The value of the first parameter called `name` (case-insensitive, as RFC 7587
    /// and most payload formats define their names).
    public subscript(name: String) -> String? {
        let lowered = name.lowercased()
        return parameters.first { $0.name.lowercased() == lowered }?.value
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(format, forKey: .format)
        try c.encode(parameters, forKey: .parameters)
    }

    private enum CodingKeys: String, CodingKey { case format, parameters }
}
