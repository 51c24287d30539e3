internal import ParleyWireCore

/// An RFC 4733 telephone-event payload block (§2.3), such as a DTMF digit.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |     event     |E|R| volume    |          duration             |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
public struct TelephoneEvent: Sendable, Hashable, Encodable {
    public static let size = 4

    /// Event code: 0-9 digits, 10 `*`, 11 `#`, 12-15 `A`-`D`, 16 flash (RFC 4733 §3.2);
    /// other codes are kept as numbers.
    public var event: UInt8
    /// E bit: this packet ends the event.
    public var isEnd: Bool
    /// R bit: reserved, sent as 0, kept as received.
    public var reserved: Bool
    /// Power level in -dBm0, 0-63 (6 bits).
    public var volume: UInt8
    /// Duration so far, in timestamp units.
    public var duration: UInt16

    public init(event: UInt8, isEnd: Bool = false, reserved: Bool = false, volume: UInt8 = 10, duration: UInt16) {
        self.event = event
        self.isEnd = isEnd
        self.reserved = reserved
        self.volume = volume
        self.duration = duration
    }

    /// The DTMF event for `key` (`0`-`9`, `*`, `#`, `A`-`D`, either case), or nil.
    public init?(key: Character, isEnd: Bool = false, volume: UInt8 = 10, duration: UInt16 = 0) {
        guard let code = Self.eventCode(for: key) else { return nil }
        self.init(event: code, isEnd: isEnd, volume: volume, duration: duration)
    }

    /// RFC 4733 §3.2: the event code of a DTMF key.
    public static func eventCode(for key: Character) -> UInt8? {
        switch key {
        case "0"..."9": key.asciiValue.map { $0 - UInt8(ascii: "0") }
        case "*": 10
        case "#": 11
        case "A"..."D": key.asciiValue.map { $0 - UInt8(ascii: "A") + 12 }
        case "a"..."d": key.asciiValue.map { $0 - UInt8(ascii: "a") + 12 }
        default: nil
        }
    }

    /// RFC 4733 §3.2: the DTMF key of an event code 0-15, or nil for other codes.
    public static func key(for event: UInt8) -> Character? {
        switch event {
        case 0...9: Character(Unicode.Scalar(UInt8(ascii: "0") + event))
        case 10: "*"
        case 11: "#"
        case 12...15: Character(Unicode.Scalar(UInt8(ascii: "A") + event - 12))
        default: nil
        }
    }

    /// This event's DTMF key, if it is one.
    public var key: Character? { Self.key(for: event) }

    /// Parses exactly one 4-byte block.
    public init(parsing bytes: [UInt8]) throws(RTPError) {
        guard bytes.count == Self.size else {
            if bytes.count < Self.size {
                throw .truncated("telephone-event", offset: 0, needed: Self.size, available: bytes.count)
            }
            throw RTPError(.invalidLength, offset: Self.size, "telephone-event", "\(bytes.count) bytes, expected exactly 4")
        }
        self.init(block: bytes[...], at: 0)
    }

    private init(block bytes: ArraySlice<UInt8>, at index: Int) {
        event = bytes[index]
        isEnd = bytes[index + 1] & 0x80 != 0
        reserved = bytes[index + 1] & 0x40 != 0
        volume = bytes[index + 1] & 0x3f
        duration = bytes.readUInt16(at: index + 2)
    }

    /// Parses an RTP payload of one or more blocks (RFC 4733 §2.5.1.5 allows several
    /// in one packet): a non-zero multiple of 4 bytes.
    public static func parseBlocks(_ payload: ArraySlice<UInt8>) throws(RTPError) -> [TelephoneEvent] {
        guard payload.count >= size else {
            throw .truncated("telephone-event", offset: 0, needed: size, available: payload.count)
        }
        guard payload.count % size == 0 else {
            throw RTPError(.invalidLength, offset: payload.count - payload.count % size, "telephone-event",
                           "payload of \(payload.count) bytes is not a whole number of 4-byte events")
        }
        var events: [TelephoneEvent] = []
        events.reserveCapacity(payload.count / size)
        for index in stride(from: payload.startIndex, to: payload.endIndex, by: size) {
            events.append(TelephoneEvent(block: payload, at: index))
        }
        return events
    }

    /// Appends the 4-byte block. Throws `.invalidValue` when `volume` exceeds 63.
    public func serialize(into output: inout [UInt8]) throws(RTPError) {
        guard volume <= 63 else {
            throw RTPError(.invalidValue, offset: output.count + 1, "telephone-event volume", "\(volume) does not fit in 6 bits")
        }
        output.append(event)
        output.append((isEnd ? 0x80 : 0) | (reserved ? 0x40 : 0) | volume)
        output.appendUInt16(duration)
    }

    public func serialized() throws(RTPError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(Self.size)
        try serialize(into: &output)
        return output
    }

    /// `{"event": n, "key": "5" or null, "end": bool, "reserved": bool, "volume": n, "duration": n}`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(event, forKey: .event)
        try c.encode(key.map { String($0) }, forKey: .key)
        try c.encode(isEnd, forKey: .end)
        try c.encode(reserved, forKey: .reserved)
        try c.encode(volume, forKey: .volume)
        try c.encode(duration, forKey: .duration)
    }

    private enum CodingKeys: String, CodingKey { case event, key, end, reserved, volume, duration }
}
