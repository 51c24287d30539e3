/// Which reserved header bits an extension has claimed (RFC 6455 §5.2, §9).
public struct WebSocketReservedBits: OptionSet, Sendable, Hashable {
    /// The bits as they sit in the first header byte (0x40, 0x20, 0x10).
    public let rawValue: UInt8
    /// Bits outside 0x70 are ignored.
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x70 }

    /// RSV1 (0x40), claimed by permessage-deflate (RFC 7692).
    public static let rsv1 = WebSocketReservedBits(rawValue: 0x40)
    /// RSV2 (0x20).
    public static let rsv2 = WebSocketReservedBits(rawValue: 0x20)
    /// RSV3 (0x10).
    public static let rsv3 = WebSocketReservedBits(rawValue: 0x10)
}

/// Incremental frame parser: feed byte chunks of any size (one byte at a time works),
/// pull complete frames out. It holds only the bytes it has been given and never
/// allocates more than it has received, whatever a length field claims.
///
/// ```swift
/// var parser = WebSocketFrameParser(configuration: .server())
/// parser.append(chunkFromSocket)
/// while let frame = try parser.nextFrame() { handle(frame) }   // nil: need more bytes
/// ```
///
/// Every header is checked as soon as its bytes are in, before any payload is
/// collected: reserved bits and opcodes, control frame rules, masking by role, minimal
/// length encoding and the frame size limit (§5.2, §5.5). After an error the parser
/// stays failed and throws the same error again.
///
/// Errors carry the stream offset: bytes consumed since the parser was created.
public struct WebSocketFrameParser: Sendable {
    /// What the parser accepts.
    public struct Configuration: Sendable, Hashable {
        /// Whether frames must carry a masking key.
        public enum Masking: Sendable, Hashable {
            /// Frames must be masked: a server reading a client (§5.1).
            case required
            /// Frames must not be masked: a client reading a server (§5.1).
            case forbidden
            /// Either; for inspecting captures of both directions.
            case optional
        }

        /// Masking rule; see `server()` and `client()`.
        public var masking: Masking
        /// Largest payload accepted in one data frame, checked from the header before
        /// the payload arrives. Control frames are held to 125 bytes regardless.
        public var maxFrameSize: Int
        /// Reserved bits a negotiated extension uses; empty, since this module implements
        /// no extension, so any set bit is an error.
        public var allowedReservedBits: WebSocketReservedBits

        /// One mebibyte: larger than any signaling message, small enough to hold per connection.
        public static let defaultMaxFrameSize = 1 << 20

        /// A configuration with the given rule and limits.
        public init(masking: Masking, maxFrameSize: Int = defaultMaxFrameSize, allowedReservedBits: WebSocketReservedBits = []) {
            self.masking = masking
            self.maxFrameSize = maxFrameSize
            self.allowedReservedBits = allowedReservedBits
        }

        /// A server reading client frames: masking required.
        public static func server(maxFrameSize: Int = defaultMaxFrameSize) -> Configuration {
            Configuration(masking: .required, maxFrameSize: maxFrameSize)
        }

        /// A client reading server frames: masking forbidden.
        public static func client(maxFrameSize: Int = defaultMaxFrameSize) -> Configuration {
            Configuration(masking: .forbidden, maxFrameSize: maxFrameSize)
        }

        /// Either masking, no size limit beyond the bytes actually given: for
        /// `parley inspect` over captures.
        public static let inspecting = Configuration(masking: .optional, maxFrameSize: Int.max)
    }

    /// A frame header once all of it has arrived.
    struct Header: Sendable, Hashable {
        var fin: Bool
        var reservedBits: UInt8
        var opcode: WebSocketOpcode
        var maskingKey: WebSocketMaskingKey?
        var length: Int
        /// Stream offset of the frame's first byte.
        var offset: Int
        /// Stream offset of the payload's first byte.
        var payloadOffset: Int
    }

    /// One step of progress.
    enum Step: Sendable {
        case needMoreBytes
        /// A header is complete; its payload has not been collected yet.
        case header(Header)
        case frame(WebSocketFrame)
    }

    private enum State: Sendable {
        /// Waiting for the two fixed header bytes.
        case awaitingHeader
        /// The fixed bytes are checked; waiting for the 2- or 8-byte extended length.
        case awaitingExtendedLength(first: UInt8, second: UInt8, frameOffset: Int)
        /// The length is known; waiting for the 4-byte masking key.
        case awaitingMaskingKey(first: UInt8, masked: Bool, length: Int, frameOffset: Int)
        /// Header reported; collecting the payload into `payload`.
        case awaitingPayload(Header)
        case failed(WebSocketError)
    }

    /// The configuration; may be changed between frames.
    public var configuration: Configuration

    private var state: State = .awaitingHeader
    /// Received bytes not yet consumed start at `readIndex`.
    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// Stream offset of `buffer[0]`.
    private var bufferBase = 0
    /// Unmasked payload of the frame in progress.
    private var payload: [UInt8] = []

    /// A parser at the start of a stream.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Bytes consumed so far, i.e. the stream offset of the next unread byte.
    public var streamOffset: Int { bufferBase + readIndex }

    /// Bytes received but not yet consumed by a header or payload.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// True between frames: no frame is partly read and nothing is buffered.
    public var isAtFrameBoundary: Bool {
        if case .awaitingHeader = state { return bufferedByteCount == 0 }
        return false
    }

    /// Payload collected so far of the frame in progress (empty between frames).
    var partialPayload: [UInt8] { payload }

    /// Adds received bytes. Cheap: nothing is parsed until `nextFrame()`.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if readIndex == buffer.count {
            bufferBase += readIndex
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        } else if readIndex >= 4096, readIndex * 2 >= buffer.count {
            bufferBase += readIndex
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
        buffer.appendBytes(bytes)
    }

    /// The next complete frame, or nil when more bytes are needed.
    public mutating func nextFrame() throws(WebSocketError) -> WebSocketFrame? {
        while true {
            switch try step() {
            case .needMoreBytes: return nil
            case .header: continue
            case .frame(let frame): return frame
            }
        }
    }

    /// Throws `truncated` if the stream ended inside a frame (call at end of input).
    public func finish() throws(WebSocketError) {
        if case .failed(let error) = state { throw error }
        if !isAtFrameBoundary { throw truncationError() }
    }

    /// The error describing what the parser is still waiting for.
    func truncationError() -> WebSocketError {
        let have = bufferedByteCount
        switch state {
        case .failed(let error):
            return error
        case .awaitingHeader:
            return WebSocketError(.truncated, offset: streamOffset, "frame header needs 2 bytes, \(have) left")
        case .awaitingExtendedLength(_, let second, _):
            let need = second & 0x7f == 126 ? 2 : 8
            return WebSocketError(.truncated, offset: streamOffset, "extended payload length needs \(need) bytes, \(have) left")
        case .awaitingMaskingKey:
            return WebSocketError(.truncated, offset: streamOffset, "masking key needs 4 bytes, \(have) left")
        case .awaitingPayload(let header):
            return WebSocketError(.truncated, offset: header.payloadOffset,
                                  "payload needs \(header.length) bytes, \(payload.count + have) left")
        }
    }

    /// Advances as far as the buffered bytes allow, stopping after a complete header
    /// (so a caller can judge it before its payload arrives) or a complete frame.
    mutating func step() throws(WebSocketError) -> Step {
        do {
            return try advance()
        } catch {
            state = .failed(error)
            payload = []
            throw error
        }
    }

    private mutating func advance() throws(WebSocketError) -> Step {
        while true {
            switch state {
            case .failed(let error):
                throw error

            case .awaitingHeader:
                guard bufferedByteCount >= 2 else { return .needMoreBytes }
                let first = buffer[readIndex]
                let second = buffer[readIndex + 1]
                let frameOffset = streamOffset
                try checkFixedHeader(first: first, second: second, offset: frameOffset)
                let shortLength = second & 0x7f
                if shortLength < 126, !WebSocketOpcode(nibble: first).isControl, Int(shortLength) > configuration.maxFrameSize {
                    throw WebSocketError(.frameTooLarge, offset: frameOffset + 1,
                                         "payload length \(shortLength) exceeds the limit of \(configuration.maxFrameSize) bytes")
                }
                readIndex += 2
                if shortLength >= 126 {
                    state = .awaitingExtendedLength(first: first, second: second, frameOffset: frameOffset)
                } else {
                    state = .awaitingMaskingKey(first: first, masked: second & 0x80 != 0, length: Int(shortLength), frameOffset: frameOffset)
                }

            case .awaitingExtendedLength(let first, let second, let frameOffset):
                let wide = second & 0x7f == 127
                let width = wide ? 8 : 2
                guard bufferedByteCount >= width else { return .needMoreBytes }
                var length: UInt64 = 0
                for index in readIndex..<(readIndex + width) { length = length << 8 | UInt64(buffer[index]) }
                let lengthOffset = streamOffset
                // §5.2: 16-bit lengths are for 126-65535, 64-bit ones for larger values
                // with the most significant bit 0; anything else is not minimal/valid.
                if wide {
                    guard length & (1 << 63) == 0 else {
                        throw WebSocketError(.invalidLength, offset: lengthOffset,
                                             "64-bit payload length 0x\(String(length, radix: 16)) has its most significant bit set")
                    }
                    guard length > 0xffff else {
                        throw WebSocketError(.nonMinimalLength, offset: lengthOffset,
                                             "payload length \(length) written in 8 bytes, fits in \(length < 126 ? "7 bits" : "2 bytes")")
                    }
                } else {
                    guard length >= 126 else {
                        throw WebSocketError(.nonMinimalLength, offset: lengthOffset,
                                             "payload length \(length) written in 2 bytes, fits in 7 bits")
                    }
                }
                // Control frames never get here: their 7-bit length was checked to be <= 125.
                guard length <= UInt64(max(0, configuration.maxFrameSize)) else {
                    throw WebSocketError(.frameTooLarge, offset: lengthOffset,
                                         "payload length \(length) exceeds the limit of \(configuration.maxFrameSize) bytes")
                }
                readIndex += width
                state = .awaitingMaskingKey(first: first, masked: second & 0x80 != 0, length: Int(length), frameOffset: frameOffset)

            case .awaitingMaskingKey(let first, let masked, let length, let frameOffset):
                var key: WebSocketMaskingKey? = nil
                if masked {
                    guard bufferedByteCount >= 4 else { return .needMoreBytes }
                    key = WebSocketMaskingKey(buffer[readIndex], buffer[readIndex + 1], buffer[readIndex + 2], buffer[readIndex + 3])
                    readIndex += 4
                }
                let header = Header(fin: first & 0x80 != 0, reservedBits: first & 0x70, opcode: WebSocketOpcode(nibble: first),
                                    maskingKey: key, length: length, offset: frameOffset, payloadOffset: streamOffset)
                payload = []
                payload.reserveCapacity(min(length, bufferedByteCount))
                state = .awaitingPayload(header)
                return .header(header)

            case .awaitingPayload(let header):
                let take = min(header.length - payload.count, bufferedByteCount)
                if take > 0 {
                    let start = payload.count
                    payload.append(contentsOf: buffer[readIndex..<(readIndex + take)])
                    readIndex += take
                    header.maskingKey?.apply(to: &payload, range: start..<payload.count, phase: start)
                }
                guard payload.count == header.length else { return .needMoreBytes }
                let frame = WebSocketFrame(fin: header.fin, rsv1: header.reservedBits & 0x40 != 0,
                                           rsv2: header.reservedBits & 0x20 != 0, rsv3: header.reservedBits & 0x10 != 0,
                                           opcode: header.opcode, maskingKey: header.maskingKey, payload: payload)
                payload = []
                state = .awaitingHeader
                return .frame(frame)
            }
        }
    }

    /// Checks everything the first two header bytes decide (§5.2, §5.5, §5.1).
    private func checkFixedHeader(first: UInt8, second: UInt8, offset: Int) throws(WebSocketError) {
        let reserved = first & 0x70
        if reserved & ~configuration.allowedReservedBits.rawValue != 0 {
            throw WebSocketError(.reservedBits, offset: offset,
                                 "reserved bits 0x\(String(reserved >> 4, radix: 16)) set and no extension was negotiated")
        }
        let opcode = WebSocketOpcode(nibble: first)
        if opcode.isReserved {
            throw WebSocketError(.reservedOpcode, offset: offset,
                                 "opcode 0x\(String(opcode.rawValue, radix: 16)) is reserved and no extension was negotiated")
        }
        let shortLength = second & 0x7f
        if opcode.isControl {
            guard first & 0x80 != 0 else {
                throw WebSocketError(.fragmentedControlFrame, offset: offset, "\(opcode) frame has FIN clear; control frames cannot be fragmented")
            }
            guard shortLength <= 125 else {
                throw WebSocketError(.controlFrameTooLong, offset: offset + 1,
                                     "\(opcode) frame uses an extended length; control payloads are at most 125 bytes")
            }
        }
        let masked = second & 0x80 != 0
        switch configuration.masking {
        case .required where !masked:
            throw WebSocketError(.unmaskedFrame, offset: offset + 1, "client frames must be masked")
        case .forbidden where masked:
            throw WebSocketError(.maskedFrame, offset: offset + 1, "server frames must not be masked")
        default:
            break
        }
    }
}

extension WebSocketOpcode {
    /// The low nibble of a header byte; always valid.
    fileprivate init(nibble: UInt8) {
        self = WebSocketOpcode(rawValue: nibble & 0x0f) ?? .continuation
    }
}
