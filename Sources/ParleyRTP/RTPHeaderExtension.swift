/// The RTP header extension (RFC 3550 §5.3.1): a 16-bit profile-defined value and a
/// whole number of 32-bit words of data.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |      defined by profile       |           length              |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                        header extension                       |
/// |                             ....                              |
/// ```
///
/// When the profile is 0xBEDE (one-byte form) or 0x100X (two-byte form, X being the
/// "appbits"), the data is a list of elements as RFC 8285 §4 defines them. The packet
/// parser keeps the words raw; `elements()` or `value(forID:)` decode them on demand,
/// so a malformed element list never makes the packet itself unreadable (the RTP
/// header is still good, and relays forward such packets as they are).
public struct RTPHeaderExtension: Sendable, Hashable {
    /// Profile value of the one-byte element form (RFC 8285 §4.2).
    public static let oneByteProfile: UInt16 = 0xBEDE
    /// Profile value of the two-byte element form with appbits 0 (RFC 8285 §4.3).
    public static let twoByteProfile: UInt16 = 0x1000

    /// The 16 bits "defined by profile".
    public var profile: UInt16
    /// The extension words, without the 4-byte profile/length header. A whole number
    /// of 32-bit words for the packet to serialize.
    public var data: ArraySlice<UInt8>

    public init(profile: UInt16, data: ArraySlice<UInt8>) {
        self.profile = profile
        self.data = data
    }

    /// How the data is structured, read from `profile`.
    public enum Form: Sendable, Hashable {
        /// RFC 8285 §4.2, profile 0xBEDE: IDs 1-14, 1-16 data bytes per element.
        case oneByte
        /// RFC 8285 §4.3, profile 0x100X: IDs 1-255, 0-255 data bytes, `appBits` = X.
        case twoByte(appBits: UInt8)
        /// Any other profile: opaque words.
        case generic
    }

    public var form: Form {
        if profile == Self.oneByteProfile { return .oneByte }
        if profile & 0xfff0 == Self.twoByteProfile { return .twoByte(appBits: UInt8(profile & 0x0f)) }
        return .generic
    }

    /// One RFC 8285 extension element: a local identifier (negotiated with `a=extmap`)
    /// and its value.
    public struct Element: Sendable, Hashable {
        public var id: UInt8
        public var data: [UInt8]

        public init(id: UInt8, data: [UInt8]) {
            self.id = id
            self.data = data
        }
    }

    // MARK: Decoding elements

    /// The elements of a one-byte or two-byte form extension, in order; empty for the
    /// generic form. Padding bytes are skipped; in the one-byte form ID 15 ends the list
    /// (RFC 8285 §4.2). Throws `.invalidHeaderExtension` or `.truncated` with an offset
    /// counted from the start of `data`.
    public func elements() throws(RTPError) -> [Element] {
        var result: [Element] = []
        try forEachElement { id, value in
            result.append(Element(id: id, data: Array(value)))
            return true
        }
        return result
    }

    /// The value of the first element with identifier `id`, as a slice of `data`, or nil
    /// when there is none, the form is generic, or the element list is malformed before
    /// reaching it. Allocates nothing; meant for per-packet look-ups such as audio level.
    public func value(forID id: UInt8) -> ArraySlice<UInt8>? {
        var found: ArraySlice<UInt8>? = nil
        do {
            try forEachElement { elementID, value in
                if elementID == id { found = value; return false }
                return true
            }
        } catch {
            return found
        }
        return found
    }

    /// Walks the elements, stopping early when `body` returns false.
    private func forEachElement(_ body: (UInt8, ArraySlice<UInt8>) -> Bool) throws(RTPError) {
        let base = data.startIndex
        let end = data.endIndex
        var i = base
        switch form {
        case .generic:
            return
        case .oneByte:
            // RFC 8285 §4.2: ID (4 bits) | L (4 bits), then L+1 bytes of data.
            while i < end {
                let byte = data[i]
                if byte == 0 { i += 1; continue }  // padding between or after elements
                let id = byte >> 4
                if id == 15 { return }  // reserved: stop, keep what came before
                guard id != 0 else {
                    throw RTPError(.invalidHeaderExtension, offset: i - base, "one-byte extension element",
                                   "ID 0 is reserved for padding but has length bits \(byte & 0x0f)")
                }
                let length = Int(byte & 0x0f) + 1
                i += 1
                guard end - i >= length else {
                    throw .truncated("one-byte extension element \(id)", offset: i - base, needed: length, available: end - i)
                }
                if !body(id, data[i..<(i + length)]) { return }
                i += length
            }
        case .twoByte:
            // RFC 8285 §4.3: ID (8 bits) | L (8 bits), then L bytes of data.
            while i < end {
                let id = data[i]
                if id == 0 { i += 1; continue }
                guard end - i >= 2 else {
                    throw .truncated("two-byte extension element header", offset: i - base, needed: 2, available: end - i)
                }
                let length = Int(data[i + 1])
                i += 2
                guard end - i >= length else {
                    throw .truncated("two-byte extension element \(id)", offset: i - base, needed: length, available: end - i)
                }
                if !body(id, data[i..<(i + length)]) { return }
                i += length
            }
        }
    }

    // MARK: Building

    /// A one-byte form extension (RFC 8285 §4.2) holding `elements`, zero-padded to a
    /// whole word. Each ID must be 1-14 and each value 1-16 bytes.
    public static func oneByte(_ elements: [Element]) throws(RTPError) -> RTPHeaderExtension {
        var bytes: [UInt8] = []
        for element in elements {
            guard (1...14).contains(element.id), (1...16).contains(element.data.count) else {
                throw RTPError(.invalidValue, offset: bytes.count, "one-byte extension element",
                               "ID \(element.id) with \(element.data.count) bytes; needs ID 1-14 and 1-16 bytes")
            }
            bytes.append(element.id << 4 | UInt8(element.data.count - 1))
            bytes.append(contentsOf: element.data)
        }
        return try padded(profile: oneByteProfile, bytes)
    }

    /// A two-byte form extension (RFC 8285 §4.3) holding `elements`, zero-padded to a
    /// whole word. Each ID must be 1-255 and each value 0-255 bytes; `appBits` 0-15.
    public static func twoByte(_ elements: [Element], appBits: UInt8 = 0) throws(RTPError) -> RTPHeaderExtension {
        guard appBits <= 0x0f else {
            throw RTPError(.invalidValue, offset: 0, "two-byte extension", "appbits \(appBits) does not fit in 4 bits")
        }
        var bytes: [UInt8] = []
        for element in elements {
            guard element.id != 0, element.data.count <= 255 else {
                throw RTPError(.invalidValue, offset: bytes.count, "two-byte extension element",
                               "ID \(element.id) with \(element.data.count) bytes; needs ID 1-255 and 0-255 bytes")
            }
            bytes.append(element.id)
            bytes.append(UInt8(element.data.count))
            bytes.append(contentsOf: element.data)
        }
        return try padded(profile: twoByteProfile | UInt16(appBits), bytes)
    }

    /// The one-byte form when every element fits it, else the two-byte form, as RFC 8285
    /// §4.1 advises (the smaller form whenever possible).
    public init(elements: [Element]) throws(RTPError) {
        let fitsOneByte = elements.allSatisfy { (1...14).contains($0.id) && (1...16).contains($0.data.count) }
        self = fitsOneByte ? try Self.oneByte(elements) : try Self.twoByte(elements)
    }

    private static func padded(profile: UInt16, _ bytes: [UInt8]) throws(RTPError) -> RTPHeaderExtension {
        var bytes = bytes
        while bytes.count % 4 != 0 { bytes.append(0) }
        guard bytes.count / 4 <= Int(UInt16.max) else {
            throw RTPError(.invalidValue, offset: 0, "RTP header extension", "\(bytes.count) bytes exceed 65535 words")
        }
        return RTPHeaderExtension(profile: profile, data: bytes[...])
    }
}
