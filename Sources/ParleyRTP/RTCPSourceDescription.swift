internal import ParleyWireCore

/// RTCP source description, packet type 202 (RFC 3550 §6.5).
///
/// ```
/// |V=2|P|    SC   |  PT=SDES=202  |             length            |
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// |                          SSRC/CSRC_1                          |
/// |     type      |    length     | text ...                      |
/// |     ...       |  0 (END)      | null octets to a word boundary|
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// |                          SSRC/CSRC_2 ...                      |
/// ```
///
/// Each chunk's item list ends with a zero octet followed by zero octets up to the next
/// 32-bit boundary; the parser insists they are zero (so serialization reproduces
/// them) and that the chunks fill the packet exactly.
public struct RTCPSourceDescription: Sendable, Hashable, Encodable {
    public static let packetType: UInt8 = 202

    /// SDES item type (RFC 3550 §6.5.1-§6.5.8).
    public struct ItemType: Sendable, Hashable, Encodable, RawRepresentable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let cname = ItemType(rawValue: 1)
        public static let name = ItemType(rawValue: 2)
        public static let email = ItemType(rawValue: 3)
        public static let phone = ItemType(rawValue: 4)
        public static let location = ItemType(rawValue: 5)
        public static let tool = ItemType(rawValue: 6)
        public static let note = ItemType(rawValue: 7)
        public static let privateExtension = ItemType(rawValue: 8)

        /// The RFC's short name (`CNAME`, `PRIV`, ...) or `type N` for others.
        public var name: String {
            switch rawValue {
            case 1: "CNAME"
            case 2: "NAME"
            case 3: "EMAIL"
            case 4: "PHONE"
            case 5: "LOC"
            case 6: "TOOL"
            case 7: "NOTE"
            case 8: "PRIV"
            default: "type \(rawValue)"
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(rawValue)
        }
    }

    /// One SDES item: type and value octets (UTF-8 text for the standard types).
    public struct Item: Sendable, Hashable, Encodable {
        public var type: ItemType
        /// 0-255 octets. For PRIV, the prefix length octet, prefix and value (§6.5.8).
        public var value: [UInt8]

        public init(type: ItemType, value: [UInt8]) {
            self.type = type
            self.value = value
        }

        public init(type: ItemType, text: String) {
            self.init(type: type, value: Array(text.utf8))
        }

        /// A PRIV item (§6.5.8) from its prefix and value.
        public static func privateExtension(prefix: [UInt8], value: [UInt8]) -> Item {
            Item(type: .privateExtension, value: [UInt8(truncatingIfNeeded: prefix.count)] + prefix + value)
        }

        /// The value as text when it is valid UTF-8.
        public var text: String? { UTF8Validator.string(value) }

        /// For a PRIV item whose prefix length fits: its prefix and value.
        public var privateParts: (prefix: [UInt8], value: [UInt8])? {
            guard type == .privateExtension, let length = value.first, Int(length) < value.count else { return nil }
            let prefixEnd = 1 + Int(length)
            return (Array(value[1..<prefixEnd]), Array(value[prefixEnd...]))
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: RTCPCodingKeys.self)
            try c.encode(type.name, forKey: .type)
            try c.encode(type.rawValue, forKey: .typeCode)
            try c.encode(Hex.encode(value), forKey: .value)
            if let parts = privateParts {
                try c.encode(Hex.encode(parts.prefix), forKey: .prefix)
                try c.encode(UTF8Validator.string(parts.value), forKey: .text)
            } else {
                try c.encodeNil(forKey: .prefix)
                try c.encode(text, forKey: .text)
            }
        }
    }

    /// The items describing one source.
    public struct Chunk: Sendable, Hashable, Encodable {
        public var ssrc: UInt32
        public var items: [Item]

        public init(ssrc: UInt32, items: [Item]) {
            self.ssrc = ssrc
            self.items = items
        }

        /// The CNAME text, if the chunk has a CNAME item in UTF-8.
        public var cname: String? { items.first { $0.type == .cname }?.text }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: RTCPCodingKeys.self)
            try c.encode(ssrc, forKey: .ssrc)
            try c.encode(items, forKey: .items)
        }
    }

    /// At most 31 chunks.
    public var chunks: [Chunk]

    public init(chunks: [Chunk]) { self.chunks = chunks }

    static func parse(count: UInt8, _ reader: inout SliceReader, packetStart: Int) throws(RTPError) -> RTCPSourceDescription {
        var chunks: [Chunk] = []
        for _ in 0..<count {
            let ssrc = try reader.uint32("SDES chunk")
            var items: [Item] = []
            while true {
                let type = try reader.uint8("SDES chunk (no END item)")
                if type == 0 {
                    // END: zero octets up to the next 32-bit boundary of the packet.
                    let misalignment = (reader.index - packetStart) % 4
                    let fill = misalignment == 0 ? 0 : 4 - misalignment
                    let at = reader.offset
                    let zeros = try reader.bytes(fill, "SDES chunk padding")
                    guard zeros.allSatisfy({ $0 == 0 }) else {
                        throw RTPError(.malformed, offset: at, "SDES chunk padding", "padding after END must be zero octets")
                    }
                    break
                }
                let length = Int(try reader.uint8("SDES item"))
                let value = try reader.bytes(length, "SDES \(ItemType(rawValue: type).name) item")
                items.append(Item(type: ItemType(rawValue: type), value: value))
            }
            chunks.append(Chunk(ssrc: ssrc, items: items))
        }
        guard reader.remaining == 0 else {
            throw RTPError(.invalidLength, offset: reader.offset, "SDES",
                           "\(reader.remaining) bytes after the \(count) chunks the source count announces")
        }
        return RTCPSourceDescription(chunks: chunks)
    }

    func serializeBody(into output: inout [UInt8], packetStart: Int) throws(RTPError) -> UInt8 {
        guard chunks.count <= 31 else {
            throw RTPError(.invalidValue, offset: packetStart, "SDES", "\(chunks.count) chunks, at most 31 fit")
        }
        for chunk in chunks {
            output.appendUInt32(chunk.ssrc)
            for item in chunk.items {
                guard item.type.rawValue != 0, item.value.count <= 255 else {
                    throw RTPError(.invalidValue, offset: output.count, "SDES item",
                                   "type \(item.type.rawValue) with \(item.value.count) octets; needs type 1-255 and 0-255 octets")
                }
                output.append(item.type.rawValue)
                output.append(UInt8(item.value.count))
                output.append(contentsOf: item.value)
            }
            output.append(0)
            while (output.count - packetStart) % 4 != 0 { output.append(0) }
        }
        return UInt8(chunks.count)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: RTCPCodingKeys.self)
        try c.encode("sourceDescription", forKey: .type)
        try c.encode(Self.packetType, forKey: .packetType)
        try c.encode(chunks, forKey: .chunks)
    }
}
