/// `a=rtpmap:<payload type> <encoding name>/<clock rate>[/<encoding parameters>]`
/// (RFC 8866 §6.6). For audio the encoding parameters are the channel count.
public struct RTPMap: SDPAttributeValue {
    public static let attributeName = "rtpmap"

    /// 0-127.
    public var payloadType: UInt8
    /// As written, e.g. `opus`, `PCMU`, `telephone-event` (compare case-insensitively).
    public var encodingName: String
    /// RTP timestamp rate in Hz.
    public var clockRate: UInt32
    /// Audio channel count when written (`opus/48000/2`); nil means 1 for audio.
    public var channels: UInt16?

    public init(payloadType: UInt8, encodingName: String, clockRate: UInt32, channels: UInt16? = nil) {
        self.payloadType = payloadType
        self.encodingName = encodingName
        self.clockRate = clockRate
        self.channels = channels
    }

    public init(attributeValue: String) throws(SDPError) {
        let fields = SDPText.looseFields(Substring(attributeValue))
        guard fields.count == 2 else {
            throw .malformed(Self.self, "expected <payload type> <encoding>/<clock rate>, found \(SDPText.quote(attributeValue))")
        }
        guard let payloadType = SDPText.decimal(fields[0], as: UInt8.self), payloadType <= 127 else {
            throw .malformed(Self.self, "payload type \(SDPText.quote(fields[0])) is not a number 0-127")
        }
        let parts = SDPText.split(fields[1], on: UInt8(ascii: "/"))
        guard parts.count == 2 || parts.count == 3, SDPText.isToken(parts[0]) else {
            throw .malformed(Self.self, "expected <encoding>/<clock rate>[/<channels>], found \(SDPText.quote(fields[1]))")
        }
        guard let clockRate = SDPText.decimal(parts[1], as: UInt32.self), clockRate > 0 else {
            throw .malformed(Self.self, "clock rate \(SDPText.quote(parts[1])) is not a positive number")
        }
        var channels: UInt16? = nil
        if parts.count == 3 {
            guard let count = SDPText.decimal(parts[2], as: UInt16.self) else {
                throw .malformed(Self.self, "encoding parameters \(SDPText.quote(parts[2])) are not a channel count")
            }
            channels = count
        }
        self.init(payloadType: payloadType, encodingName: String(parts[0]), clockRate: clockRate, channels: channels)
    }

    public var attributeValue: String {
        var out = "\(payloadType) \(encodingName)/\(clockRate)"
        if let channels { out += "/\(channels)" }
        return out
    }

    /// Channels with the audio default applied (RFC 8866 §6.6: absent means one).
    public var channelCount: UInt16 { channels ?? 1 }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(payloadType, forKey: .payloadType)
        try c.encode(encodingName, forKey: .encodingName)
        try c.encode(clockRate, forKey: .clockRate)
        try c.encode(channels, forKey: .channels)
    }

    private enum CodingKeys: String, CodingKey { case payloadType, encodingName, clockRate, channels }
}
