/// An audio codec as SDP names it: encoding name, clock rate, channel count, and the
/// payload type it gets in offers we write.
public struct AudioCodec: Sendable, Hashable, Encodable {
    /// Encoding name as we write it (`opus`, `PCMU`, `PCMA`); matched case-insensitively.
    public var name: String
    public var clockRate: UInt32
    /// Channels as written in `a=rtpmap` (Opus is always `/2` in SDP, RFC 7587 §7).
    public var channels: UInt16
    /// The static payload type from RFC 3551 §6, if it has one (PCMU 0, PCMA 8).
    public var staticPayloadType: UInt8?
    /// The payload type our offers use.
    public var offerPayloadType: UInt8

    public init(name: String, clockRate: UInt32, channels: UInt16 = 1, staticPayloadType: UInt8? = nil, offerPayloadType: UInt8) {
        self.name = name
        self.clockRate = clockRate
        self.channels = channels
        self.staticPayloadType = staticPayloadType
        self.offerPayloadType = offerPayloadType
    }

    /// Opus (RFC 7587): `opus/48000/2`, payload type 111 in our offers (as Chromium).
    public static let opus = AudioCodec(name: "opus", clockRate: 48000, channels: 2, offerPayloadType: 111)
    /// G.711 µ-law: static payload type 0 (RFC 3551 §4.5.14).
    public static let pcmu = AudioCodec(name: "PCMU", clockRate: 8000, staticPayloadType: 0, offerPayloadType: 0)
    /// G.711 A-law: static payload type 8 (RFC 3551 §4.5.14).
    public static let pcma = AudioCodec(name: "PCMA", clockRate: 8000, staticPayloadType: 8, offerPayloadType: 8)

    /// RFC 2198 redundant audio as WebRTC negotiates it for Opus: `red/48000/2`, payload
    /// type 63 in our offers (as Chromium), with fmtp `<opus>/<opus>`. Not a codec of its
    /// own but a wrapper around the primary codec's frames.
    public static let redundantOpus = AudioCodec(name: "red", clockRate: 48000, channels: 2, offerPayloadType: 63)

    /// RFC 4733 named telephone events (DTMF) at `clockRate`; not a codec of its own
    /// but negotiated like one.
    public static func telephoneEvent(clockRate: UInt32) -> AudioCodec {
        AudioCodec(name: "telephone-event", clockRate: clockRate, offerPayloadType: clockRate == 8000 ? 126 : 110)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(clockRate, forKey: .clockRate)
        try c.encode(channels, forKey: .channels)
        try c.encode(staticPayloadType, forKey: .staticPayloadType)
        try c.encode(offerPayloadType, forKey: .offerPayloadType)
    }

    private enum CodingKeys: String, CodingKey { case name, clockRate, channels, staticPayloadType, offerPayloadType }

    /// Whether an offered format (its rtpmap, or the static table) is this codec
    /// (RFC 3264 §6.1: same encoding name, clock rate and channel count).
    func matches(_ map: RTPMap) -> Bool {
        map.encodingName.lowercased() == name.lowercased() && map.clockRate == clockRate && map.channelCount == channels
    }

    /// The rtpmap our descriptions write for this codec at `payloadType`.
    func rtpMap(payloadType: UInt8) -> RTPMap {
        RTPMap(payloadType: payloadType, encodingName: name, clockRate: clockRate, channels: channels == 1 ? nil : channels)
    }

    /// RFC 3551 §6 static audio payload types, for formats offered without an rtpmap.
    static func staticMapping(_ payloadType: UInt8) -> RTPMap? {
        switch payloadType {
        case 0: RTPMap(payloadType: 0, encodingName: "PCMU", clockRate: 8000)
        case 3: RTPMap(payloadType: 3, encodingName: "GSM", clockRate: 8000)
        case 4: RTPMap(payloadType: 4, encodingName: "G723", clockRate: 8000)
        case 8: RTPMap(payloadType: 8, encodingName: "PCMA", clockRate: 8000)
        case 9: RTPMap(payloadType: 9, encodingName: "G722", clockRate: 8000)
        case 13: RTPMap(payloadType: 13, encodingName: "CN", clockRate: 8000)
        case 18: RTPMap(payloadType: 18, encodingName: "G729", clockRate: 8000)
        default: nil
        }
    }
}
