internal import ParleyWireCore

/// RTCP goodbye, packet type 203 (RFC 3550 §6.6).
///
/// ```
/// |V=2|P|    SC   |   PT=BYE=203  |             length            |
/// |                           SSRC/CSRC                           |
/// :                              ...                              :
/// |     length    |               reason for leaving             ... (opt)
/// ```
///
/// The reason is followed by zero octets to the next 32-bit boundary; the parser
/// insists they are zero.
public struct RTCPGoodbye: Sendable, Hashable, Encodable {
    public static let packetType: UInt8 = 203

    /// Sources leaving, at most 31.
    public var ssrcs: [UInt32]
    /// Reason octets (UTF-8 text), 0-255, or nil when absent.
    public var reason: [UInt8]?

    public init(ssrcs: [UInt32], reason: [UInt8]? = nil) {
        self.ssrcs = ssrcs
        self.reason = reason
    }

    public init(ssrcs: [UInt32], reason: String) {
        self.init(ssrcs: ssrcs, reason: Array(reason.utf8))
    }

    /// The reason as text when it is valid UTF-8.
    public var reasonText: String? { reason.flatMap { UTF8Validator.string($0) } }

    static func parse(count: UInt8, _ reader: inout SliceReader, packetStart: Int) throws(RTPError) -> RTCPGoodbye {
        guard reader.remaining >= 4 * Int(count) else {
            throw RTPError(.invalidLength, offset: reader.offset, "BYE",
                           "source count \(count) needs \(4 * Int(count)) bytes, length leaves \(reader.remaining)")
        }
        var ssrcs: [UInt32] = []
        ssrcs.reserveCapacity(Int(count))
        for _ in 0..<count { ssrcs.append(try reader.uint32("BYE")) }
        var reason: [UInt8]? = nil
        if reader.remaining > 0 {
            let length = Int(try reader.uint8("BYE reason"))
            reason = try reader.bytes(length, "BYE reason")
            let misalignment = (reader.index - packetStart) % 4
            let fill = misalignment == 0 ? 0 : 4 - misalignment
            let at = reader.offset
            let zeros = try reader.bytes(fill, "BYE reason padding")
            guard zeros.allSatisfy({ $0 == 0 }) else {
                throw RTPError(.malformed, offset: at, "BYE reason padding", "padding after the reason must be zero octets")
            }
            guard reader.remaining == 0 else {
                throw RTPError(.invalidLength, offset: reader.offset, "BYE", "\(reader.remaining) bytes after the reason")
            }
        }
        return RTCPGoodbye(ssrcs: ssrcs, reason: reason)
    }

    func serializeBody(into output: inout [UInt8], packetStart: Int) throws(RTPError) -> UInt8 {
        guard ssrcs.count <= 31 else {
            throw RTPError(.invalidValue, offset: packetStart, "BYE", "\(ssrcs.count) sources, at most 31 fit")
        }
        for ssrc in ssrcs { output.appendUInt32(ssrc) }
        if let reason {
            guard reason.count <= 255 else {
                throw RTPError(.invalidValue, offset: output.count, "BYE reason", "\(reason.count) octets, at most 255 fit")
            }
            output.append(UInt8(reason.count))
            output.append(contentsOf: reason)
            while (output.count - packetStart) % 4 != 0 { output.append(0) }
        }
        return UInt8(ssrcs.count)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: RTCPCodingKeys.self)
        try c.encode("goodbye", forKey: .type)
        try c.encode(Self.packetType, forKey: .packetType)
        try c.encode(ssrcs, forKey: .ssrcs)
        try c.encode(reason.map { Hex.encode($0) }, forKey: .reason)
        try c.encode(reasonText, forKey: .reasonText)
    }
}

/// RTCP application-defined packet, packet type 204 (RFC 3550 §6.7).
///
/// ```
/// |V=2|P| subtype |   PT=APP=204  |             length            |
/// |                           SSRC/CSRC                           |
/// |                          name (ASCII)                         |
/// |                   application-dependent data                ...
/// ```
public struct RTCPApplicationDefined: Sendable, Hashable, Encodable {
    public static let packetType: UInt8 = 204

    /// 0-31, in the header's count field.
    public var subtype: UInt8
    public var ssrc: UInt32
    /// Four ASCII octets.
    public var name: [UInt8]
    /// A whole number of 32-bit words.
    public var data: [UInt8]

    public init(subtype: UInt8, ssrc: UInt32, name: [UInt8], data: [UInt8]) {
        self.subtype = subtype
        self.ssrc = ssrc
        self.name = name
        self.data = data
    }

    static func parse(count: UInt8, _ reader: inout SliceReader) throws(RTPError) -> RTCPApplicationDefined {
        guard reader.remaining >= 8 else {
            throw RTPError(.invalidLength, offset: reader.offset, "APP", "SSRC and name need 8 bytes, length leaves \(reader.remaining)")
        }
        let ssrc = try reader.uint32("APP")
        let name = try reader.bytes(4, "APP name")
        return RTCPApplicationDefined(subtype: count, ssrc: ssrc, name: name, data: reader.rest())
    }

    func serializeBody(into output: inout [UInt8]) throws(RTPError) -> UInt8 {
        guard subtype <= 31, name.count == 4, data.count % 4 == 0 else {
            throw RTPError(.invalidValue, offset: output.count, "APP",
                           "needs subtype 0-31 (is \(subtype)), a 4-octet name (is \(name.count)) and whole-word data (is \(data.count) bytes)")
        }
        output.appendUInt32(ssrc)
        output.append(contentsOf: name)
        output.append(contentsOf: data)
        return subtype
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: RTCPCodingKeys.self)
        try c.encode("applicationDefined", forKey: .type)
        try c.encode(Self.packetType, forKey: .packetType)
        try c.encode(subtype, forKey: .subtype)
        try c.encode(ssrc, forKey: .ssrc)
        try c.encode(Hex.encode(name), forKey: .name)
        try c.encode(UTF8Validator.string(name), forKey: .nameText)
        try c.encode(Hex.encode(data), forKey: .data)
    }
}

/// An RTCP packet of a type this module does not decode (XR, RTPFB/PSFB relatives,
/// future types), kept whole so it serializes back unchanged.
public struct RTCPUnknownPacket: Sendable, Hashable, Encodable {
    public var packetType: UInt8
    /// The 5-bit count/format field of the header.
    public var count: UInt8
    /// Everything after the 4-byte header (without padding): whole 32-bit words.
    public var body: [UInt8]

    public init(packetType: UInt8, count: UInt8, body: [UInt8]) {
        self.packetType = packetType
        self.count = count
        self.body = body
    }

    func serializeBody(into output: inout [UInt8]) throws(RTPError) -> UInt8 {
        guard count <= 31, body.count % 4 == 0 else {
            throw RTPError(.invalidValue, offset: output.count, "RTCP packet type \(packetType)",
                           "needs count 0-31 (is \(count)) and a whole-word body (is \(body.count) bytes)")
        }
        output.append(contentsOf: body)
        return count
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: RTCPCodingKeys.self)
        try c.encode("unknown", forKey: .type)
        try c.encode(packetType, forKey: .packetType)
        try c.encode(count, forKey: .count)
        try c.encode(Hex.encode(body), forKey: .body)
    }
}
