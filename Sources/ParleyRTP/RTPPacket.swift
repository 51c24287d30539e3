/// An RTP data packet (RFC 3550 §5.1).
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|X|  CC   |M|     PT      |       sequence number         |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                           timestamp                           |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |           synchronization source (SSRC) identifier            |
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// |            contributing source (CSRC) identifiers             |
/// |                             ....                              |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |  header extension (if X): profile | length in words | words   |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |  payload ...                  | padding (if P) ... | pad count |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// Parsing copies nothing: `payload`, `padding` and the header extension's `data` are
/// slices sharing the storage of the buffer that was parsed (their indices are those of
/// that buffer, so index them relative to `startIndex`, or copy with `Array(_:)`).
/// The only allocation a parse can make is the `csrcs` array, and only when CC > 0.
public struct RTPPacket: Sendable, Hashable {
    /// The only RTP version there is (RFC 3550 §5.1); parsing rejects others.
    public static let version: UInt8 = 2
    /// Size of the fixed header, before CSRCs and extension.
    public static let fixedHeaderSize = 12

    /// The M bit; its meaning is set by the profile (for audio: first packet of a talkspurt).
    public var marker: Bool
    /// Payload type, 0-127.
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    public var timestamp: UInt32
    /// Synchronization source.
    public var ssrc: UInt32
    /// Contributing sources, at most 15 (the CC field is 4 bits).
    public var csrcs: [UInt32]
    /// The header extension when the X bit is set.
    public var headerExtension: RTPHeaderExtension?
    public var payload: ArraySlice<UInt8>
    /// Padding bytes at the end of the packet, the last of which holds their count
    /// (RFC 3550 §5.1, P bit). Empty when the P bit is clear. Kept as received so a
    /// parsed packet serializes to the same bytes; build new padding with
    /// `RTPPacket.padding(count:)`.
    public var padding: ArraySlice<UInt8>

    public init(
        marker: Bool = false,
        payloadType: UInt8,
        sequenceNumber: UInt16,
        timestamp: UInt32,
        ssrc: UInt32,
        csrcs: [UInt32] = [],
        headerExtension: RTPHeaderExtension? = nil,
        payload: ArraySlice<UInt8>,
        padding: ArraySlice<UInt8> = []
    ) {
        self.marker = marker
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcs = csrcs
        self.headerExtension = headerExtension
        self.payload = payload
        self.padding = padding
    }

    /// Zero padding of `count` bytes (1-255) ending in the count, as RFC 3550 §5.1 lays it out.
    public static func padding(count: UInt8) -> ArraySlice<UInt8> {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(count))
        bytes[bytes.count - 1] = count
        return bytes[...]
    }

    /// Whether the P bit is set.
    public var hasPadding: Bool { !padding.isEmpty }

    /// Bytes of the header: fixed part, CSRCs and header extension.
    public var headerSize: Int {
        Self.fixedHeaderSize + 4 * csrcs.count + (headerExtension.map { 4 + $0.data.count } ?? 0)
    }

    /// Bytes the serialized packet takes.
    public var serializedSize: Int { headerSize + payload.count + padding.count }

    // MARK: Parsing

    /// Parses one RTP packet occupying all of `bytes`.
    public init(parsing bytes: [UInt8]) throws(RTPError) {
        try self.init(parsing: bytes[...])
    }

    /// Parses one RTP packet occupying all of `bytes`. Offsets in errors count from
    /// `bytes.startIndex`. The packet's slices share `bytes`' storage.
    public init(parsing bytes: ArraySlice<UInt8>) throws(RTPError) {
        let base = bytes.startIndex
        let end = bytes.endIndex
        let count = end - base
        guard count >= Self.fixedHeaderSize else {
            throw .truncated("RTP header", offset: 0, needed: Self.fixedHeaderSize, available: count)
        }
        let first = bytes[base]
        guard first >> 6 == Self.version else {
            throw RTPError(.unsupportedVersion, offset: 0, "RTP header", "version \(first >> 6), expected 2")
        }
        let second = bytes[base + 1]
        marker = second & 0x80 != 0
        payloadType = second & 0x7f
        sequenceNumber = UInt16(bytes[base + 2]) << 8 | UInt16(bytes[base + 3])
        timestamp = bytes.readUInt32(at: base + 4)
        ssrc = bytes.readUInt32(at: base + 8)

        var position = base + Self.fixedHeaderSize
        let csrcCount = Int(first & 0x0f)
        if csrcCount > 0 {
            guard end - position >= 4 * csrcCount else {
                throw .truncated("RTP CSRC list", offset: position - base, needed: 4 * csrcCount, available: end - position)
            }
            var list = [UInt32]()
            list.reserveCapacity(csrcCount)
            for _ in 0..<csrcCount {
                list.append(bytes.readUInt32(at: position))
                position += 4
            }
            csrcs = list
        } else {
            csrcs = []
        }

        if first & 0x10 != 0 {
            guard end - position >= 4 else {
                throw .truncated("RTP header extension", offset: position - base, needed: 4, available: end - position)
            }
            let profile = UInt16(bytes[position]) << 8 | UInt16(bytes[position + 1])
            let length = 4 * (Int(bytes[position + 2]) << 8 | Int(bytes[position + 3]))
            position += 4
            guard end - position >= length else {
                throw .truncated("RTP header extension data", offset: position - base, needed: length, available: end - position)
            }
            headerExtension = RTPHeaderExtension(profile: profile, data: bytes[position..<(position + length)])
            position += length
        } else {
            headerExtension = nil
        }

        var payloadEnd = end
        if first & 0x20 != 0 {
            // RFC 3550 §5.1 and A.1: the last octet counts the padding, itself included,
            // and must leave the header intact.
            guard end > position else {
                throw RTPError(.invalidPadding, offset: count, "RTP padding", "P bit set but no byte after the header holds a padding count")
            }
            let padCount = Int(bytes[end - 1])
            guard padCount >= 1, padCount <= end - position else {
                throw RTPError(.invalidPadding, offset: count - 1, "RTP padding",
                               "padding count \(padCount) must be 1...\(end - position) (bytes after the header)")
            }
            payloadEnd = end - padCount
            padding = bytes[payloadEnd..<end]
        } else {
            padding = []
        }
        payload = bytes[position..<payloadEnd]
    }

    // MARK: Serializing

    /// Appends the packet's wire form to `output`.
    ///
    /// Throws `.invalidValue` when a field does not fit: payload type above 127, more
    /// than 15 CSRCs, extension data not a whole number of 32-bit words (or above
    /// 65535 words), or padding whose last byte is not its own length.
    public func serialize(into output: inout [UInt8]) throws(RTPError) {
        if output.isEmpty {
            output = try serialized()
        } else {
            output.append(contentsOf: try serialized())
        }
    }

    /// The packet's wire form. See `serialize(into:)` for what throws.
    public func serialized() throws(RTPError) -> [UInt8] {
        try validateForSerializing()
        let size = serializedSize
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            write(to: UnsafeMutableRawBufferPointer(buffer))
            initialized = size
        }
    }

    private func validateForSerializing() throws(RTPError) {
        guard payloadType <= 0x7f else {
            throw RTPError(.invalidValue, offset: 1, "RTP payload type", "\(payloadType) does not fit in 7 bits")
        }
        guard csrcs.count <= 15 else {
            throw RTPError(.invalidValue, offset: 0, "RTP CSRC count", "\(csrcs.count) CSRCs, at most 15 fit")
        }
        if let ext = headerExtension {
            guard ext.data.count % 4 == 0, ext.data.count / 4 <= Int(UInt16.max) else {
                throw RTPError(.invalidValue, offset: 12 + 4 * csrcs.count, "RTP header extension",
                               "data of \(ext.data.count) bytes is not a whole number of words up to 65535")
            }
        }
        if !padding.isEmpty {
            guard padding.count <= 255, let last = padding.last, Int(last) == padding.count else {
                throw RTPError(.invalidValue, offset: serializedSize - 1, "RTP padding",
                               "last padding byte must equal the padding length \(padding.count) (1-255)")
            }
        }
    }

    /// Writes the validated packet into `out`, which holds exactly `serializedSize` bytes.
    private func write(to out: UnsafeMutableRawBufferPointer) {
        var first = Self.version << 6 | UInt8(csrcs.count)
        if !padding.isEmpty { first |= 0x20 }
        if headerExtension != nil { first |= 0x10 }
        out[0] = first
        out[1] = (marker ? 0x80 : 0) | payloadType
        out.storeBytes(of: sequenceNumber.bigEndian, toByteOffset: 2, as: UInt16.self)
        out.storeBytes(of: timestamp.bigEndian, toByteOffset: 4, as: UInt32.self)
        out.storeBytes(of: ssrc.bigEndian, toByteOffset: 8, as: UInt32.self)
        var position = Self.fixedHeaderSize
        for csrc in csrcs {
            out.storeBytes(of: csrc.bigEndian, toByteOffset: position, as: UInt32.self)
            position += 4
        }
        if let ext = headerExtension {
            out.storeBytes(of: ext.profile.bigEndian, toByteOffset: position, as: UInt16.self)
            out.storeBytes(of: UInt16(ext.data.count / 4).bigEndian, toByteOffset: position + 2, as: UInt16.self)
            position += 4
            position = copy(ext.data, to: out, at: position)
        }
        position = copy(payload, to: out, at: position)
        _ = copy(padding, to: out, at: position)
    }

    private func copy(_ bytes: ArraySlice<UInt8>, to out: UnsafeMutableRawBufferPointer, at position: Int) -> Int {
        bytes.withUnsafeBytes { source in
            if let base = source.baseAddress, let destination = out.baseAddress, source.count > 0 {
                (destination + position).copyMemory(from: base, byteCount: source.count)
            }
        }
        return position + bytes.count
    }
}

extension ArraySlice where Element == UInt8 {
    /// Big-endian 32-bit read at an absolute index the caller has bounds-checked.
    @inline(__always)
    func readUInt32(at index: Int) -> UInt32 {
        UInt32(self[index]) << 24 | UInt32(self[index + 1]) << 16 | UInt32(self[index + 2]) << 8 | UInt32(self[index + 3])
    }

    @inline(__always)
    func readUInt16(at index: Int) -> UInt16 {
        UInt16(self[index]) << 8 | UInt16(self[index + 1])
    }
}
