internal import ParleyWireCore

extension RTPPacket: Encodable {
    /// The `parley inspect` form: every header field, the extension with its decoded
    /// RFC 8285 elements, and payload and padding as hex.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Self.version, forKey: .version)
        try c.encode(hasPadding, forKey: .padding)
        try c.encode(headerExtension != nil, forKey: .extension)
        try c.encode(csrcs.count, forKey: .csrcCount)
        try c.encode(marker, forKey: .marker)
        try c.encode(payloadType, forKey: .payloadType)
        try c.encode(sequenceNumber, forKey: .sequenceNumber)
        try c.encode(timestamp, forKey: .timestamp)
        try c.encode(ssrc, forKey: .ssrc)
        try c.encode(csrcs, forKey: .csrcs)
        try c.encode(headerExtension, forKey: .headerExtension)
        try c.encode(payload.count, forKey: .payloadSize)
        try c.encode(Hex.encode(payload), forKey: .payload)
        try c.encode(Hex.encode(padding), forKey: .paddingBytes)
    }

    private enum CodingKeys: String, CodingKey {
        case version, padding, `extension`, csrcCount, marker, payloadType, sequenceNumber, timestamp, ssrc, csrcs
        case headerExtension, payloadSize, payload, paddingBytes
    }
}

extension RTPHeaderExtension: Encodable {
    /// `{"profile", "form": "oneByte"|"twoByte"|"generic", "appBits", "data",
    /// "elements": [{"id", "data"}] or null, "elementsError": text or null}`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(profile, forKey: .profile)
        switch form {
        case .oneByte:
            try c.encode("oneByte", forKey: .form)
            try c.encodeNil(forKey: .appBits)
        case .twoByte(let appBits):
            try c.encode("twoByte", forKey: .form)
            try c.encode(appBits, forKey: .appBits)
        case .generic:
            try c.encode("generic", forKey: .form)
            try c.encodeNil(forKey: .appBits)
        }
        try c.encode(Hex.encode(data), forKey: .data)
        if case .generic = form {
            try c.encodeNil(forKey: .elements)
            try c.encodeNil(forKey: .elementsError)
        } else {
            do {
                try c.encode(try elements(), forKey: .elements)
                try c.encodeNil(forKey: .elementsError)
            } catch let error as RTPError {
                try c.encodeNil(forKey: .elements)
                try c.encode(error.description, forKey: .elementsError)
            }
        }
    }

    private enum CodingKeys: String, CodingKey { case profile, form, appBits, data, elements, elementsError }
}

extension RTPHeaderExtension.Element: Encodable {
    /// `{"id": n, "data": "hex"}`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(Hex.encode(data), forKey: .data)
    }

    private enum CodingKeys: String, CodingKey { case id, data }
}
