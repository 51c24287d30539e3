// The JSON form `parley inspect` prints (see docs/wire/sdp.md). Every key is always
// present (null when absent) so the shape is stable; attributes carry their raw value
// and, for the attributes this module knows, the parsed value or why it did not parse.

extension SessionDescription: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(version, forKey: .version)
        try c.encode(origin, forKey: .origin)
        try c.encode(sessionName, forKey: .sessionName)
        try c.encode(information, forKey: .information)
        try c.encode(uri, forKey: .uri)
        try c.encode(emails, forKey: .emails)
        try c.encode(phones, forKey: .phones)
        try c.encode(connection, forKey: .connection)
        try c.encode(bandwidths, forKey: .bandwidths)
        try c.encode(timings, forKey: .timings)
        try c.encode(timeZones, forKey: .timeZones)
        try c.encode(encryptionKey, forKey: .encryptionKey)
        try c.encode(attributes, forKey: .attributes)
        try c.encode(media, forKey: .media)
    }

    private enum CodingKeys: String, CodingKey {
        case version, origin, sessionName, information, uri, emails, phones, connection, bandwidths, timings
        case timeZones, encryptionKey, attributes, media
    }
}

extension MediaDescription: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(media, forKey: .media)
        try c.encode(port, forKey: .port)
        try c.encode(portCount, forKey: .portCount)
        try c.encode(proto, forKey: .proto)
        try c.encode(formats, forKey: .formats)
        try c.encode(information, forKey: .information)
        try c.encode(connections, forKey: .connections)
        try c.encode(bandwidths, forKey: .bandwidths)
        try c.encode(encryptionKey, forKey: .encryptionKey)
        try c.encode(attributes, forKey: .attributes)
    }

    private enum CodingKeys: String, CodingKey {
        case media, port, portCount, proto, formats, information, connections, bandwidths, encryptionKey, attributes
    }
}

extension SDPAttribute: Encodable {
    /// `{"name": "rtpmap", "value": "111 opus/48000/2", "parsed": {...}, "parseError": null}`.
    /// `parsed` is null for attributes without a typed form here (flags, unknown names).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(value, forKey: .value)
        switch typedValue() {
        case .none:
            try c.encodeNil(forKey: .parsed)
            try c.encodeNil(forKey: .parseError)
        case .success(let typed):
            try c.encode(typed, forKey: .parsed)
            try c.encodeNil(forKey: .parseError)
        case .failure(let error):
            try c.encodeNil(forKey: .parsed)
            try c.encode(error.reason, forKey: .parseError)
        }
    }

    private enum CodingKeys: String, CodingKey { case name, value, parsed, parseError }

    /// The typed value for the attribute names this module knows, nil for others.
    private func typedValue() -> Result<AnyEncodable, SDPError>? {
        func parse<T: SDPAttributeValue>(_ type: T.Type) -> Result<AnyEncodable, SDPError> {
            do {
                return .success(AnyEncodable(try parsed(as: T.self)))
            } catch {
                return .failure(error)
            }
        }
        switch name {
        case RTPMap.attributeName: return parse(RTPMap.self)
        case FormatParameters.attributeName: return parse(FormatParameters.self)
        case RTCPFeedback.attributeName: return parse(RTCPFeedback.self)
        case PacketTime.attributeName: return parse(PacketTime.self)
        case MaxPacketTime.attributeName: return parse(MaxPacketTime.self)
        case ICECandidate.attributeName: return parse(ICECandidate.self)
        case Fingerprint.attributeName: return parse(Fingerprint.self)
        case DTLSSetup.attributeName: return parse(DTLSSetup.self)
        case ExtensionMap.attributeName: return parse(ExtensionMap.self)
        case SDPGroup.attributeName: return parse(SDPGroup.self)
        case MSID.attributeName: return parse(MSID.self)
        case SSRCAttribute.attributeName: return parse(SSRCAttribute.self)
        case SSRCGroup.attributeName: return parse(SSRCGroup.self)
        case RTCPAttribute.attributeName: return parse(RTCPAttribute.self)
        case CryptoAttribute.attributeName: return parse(CryptoAttribute.self)
        case "ice-options": return .success(AnyEncodable(SDPText.looseFields(Substring(value ?? "")).map(String.init)))
        default: return nil
        }
    }
}

/// Boxes a typed attribute value for `SDPAttribute`'s JSON.
private struct AnyEncodable: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}
