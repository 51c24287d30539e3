import ParleyWireCore
/// The receiving half of a WebSocket connection after the opening handshake, as a value:
/// bytes in, `WebSocketEvent`s out. The same type serves the server and the SDK client.
///
/// It parses frames, reassembles fragmented messages (§5.4), validates text as UTF-8
/// across fragments and fails fast on the first bad byte (§8.1), enforces frame and
/// message size limits from headers before payloads arrive, answers pings (§5.5.2) and
/// runs the close handshake (§5.5.1, §7). Any protocol error turns into one
/// `.failConnection` event carrying the close code to send (§7.4.1), after which the
/// connection ignores input.
///
/// ```swift
/// var connection = WebSocketConnection(configuration: .init(role: .server))
/// for event in connection.receive(bytes) {
///     switch event {
///     case .text(let message): ...
///     case .sendPong(let payload): send(WebSocketFrame.pong(payload).serialized())
///     case .sendClose(let close): send(WebSocketFrame.close(close).serialized()); closeSocket()
///     case .failConnection(let error): send(WebSocketFrame.close(error.close).serialized()); closeSocket()
///     ...
///     }
/// }
/// ```
/// Outgoing frames are built with `WebSocketFrame`'s helpers; a client passes a fresh
/// random masking key for each (§5.3), a server none.
public struct WebSocketConnection: Sendable {
    /// Role and limits.
    public struct Configuration: Sendable, Hashable {
        /// Server or client; decides which masking incoming frames must have.
        public var role: WebSocketRole
        /// Largest data frame payload accepted (exceeding it closes with 1009).
        public var maxFrameSize: Int
        /// Largest reassembled message accepted (exceeding it closes with 1009).
        public var maxMessageSize: Int

        /// Limits default to 1 MiB each.
        public init(role: WebSocketRole,
                    maxFrameSize: Int = WebSocketFrameParser.Configuration.defaultMaxFrameSize,
                    maxMessageSize: Int = WebSocketFrameParser.Configuration.defaultMaxFrameSize) {
            self.role = role
            self.maxFrameSize = maxFrameSize
            self.maxMessageSize = maxMessageSize
        }
    }

    /// Where the connection is in its life (§7).
    public enum State: Sendable, Hashable {
        /// Messages flow both ways.
        case open
        /// This end sent a close frame and awaits the peer's; incoming messages are still
        /// delivered, but no more may be sent (§5.5.1).
        case closing
        /// The close handshake finished or the transport ended; input is ignored.
        case closed
        /// The connection was failed for a protocol error; input is ignored.
        case failed
    }

    /// A message whose first frame has arrived but not its last.
    private struct MessageInProgress: Sendable {
        var isText: Bool
        var payload: [UInt8] = []
        var validator = UTF8Validator()
    }

    /// Role and limits, fixed at creation.
    public let configuration: Configuration
    /// Where the connection is; see `State`.
    public private(set) var state: State = .open

    private var parser: WebSocketFrameParser
    private var message: MessageInProgress?
    /// Header of the frame whose payload is being collected.
    private var currentHeader: WebSocketFrameParser.Header?
    /// Payload bytes of the current frame already run through the UTF-8 validator.
    private var validatedInFrame = 0

    /// A connection whose opening handshake has just completed.
    public init(configuration: Configuration) {
        self.configuration = configuration
        let masking: WebSocketFrameParser.Configuration.Masking = configuration.role == .server ? .required : .forbidden
        parser = WebSocketFrameParser(configuration: .init(masking: masking, maxFrameSize: configuration.maxFrameSize))
    }

    /// Whether this end may still send data frames.
    public var canSendMessages: Bool { state == .open }

    /// Feeds bytes read from the transport; returns what to deliver and send, in order.
    public mutating func receive(_ bytes: some Sequence<UInt8>) -> [WebSocketEvent] {
        guard state == .open || state == .closing else { return [] }
        parser.append(bytes)
        var events: [WebSocketEvent] = []
        do throws(WebSocketError) {
            loop: while state == .open || state == .closing {
                switch try parser.step() {
                case .needMoreBytes:
                    try validatePartialText()
                    break loop
                case .header(let header):
                    try begin(header)
                case .frame(let frame):
                    try complete(frame, events: &events)
                }
            }
        } catch {
            state = .failed
            message = nil
            events.append(.failConnection(error))
        }
        return events
    }

    /// Reports that the transport reached end of stream. Before the close handshake
    /// finished this is an abnormal closure (1006, §7.1.5).
    public mutating func receiveEndOfStream() -> [WebSocketEvent] {
        switch state {
        case .open, .closing:
            state = .closed
            message = nil
            return [.closed(WebSocketClose(code: .abnormalClosure))]
        case .closed, .failed:
            return []
        }
    }

    /// Records that this end is sending a close frame; returns false (send nothing) if
    /// the connection is no longer open. The caller sends `WebSocketFrame.close(close)`.
    public mutating func beginClosing() -> Bool {
        guard state == .open else { return false }
        state = .closing
        return true
    }

    /// Records that this end is failing the connection for its own reason (for example
    /// 1008 policy violation or 1003 unsupported data from the application); returns
    /// false if it is already closed or failed. The caller sends the close frame and
    /// closes the transport.
    public mutating func fail() -> Bool {
        guard state == .open || state == .closing else { return false }
        state = .failed
        message = nil
        return true
    }

    // MARK: Frame handling

    /// Judges a header before its payload arrives: fragmentation order (§5.4) and the
    /// message size limit.
    private mutating func begin(_ header: WebSocketFrameParser.Header) throws(WebSocketError) {
        currentHeader = header
        validatedInFrame = 0
        switch header.opcode {
        case .text, .binary:
            if message != nil {
                throw WebSocketError(.expectedContinuation, offset: header.offset,
                                     "\(header.opcode) frame while a fragmented message is open; expected a continuation")
            }
            try checkMessageSize(adding: header.length, to: 0, offset: header.offset)
            message = MessageInProgress(isText: header.opcode == .text)
        case .continuation:
            guard let message else {
                throw WebSocketError(.unexpectedContinuation, offset: header.offset, "continuation frame with no fragmented message open")
            }
            try checkMessageSize(adding: header.length, to: message.payload.count, offset: header.offset)
        default:
            break
        }
    }

    private func checkMessageSize(adding length: Int, to size: Int, offset: Int) throws(WebSocketError) {
        guard length <= configuration.maxMessageSize - size else {
            throw WebSocketError(.messageTooLarge, offset: offset,
                                 "message would reach \(size) + \(length) bytes, over the limit of \(configuration.maxMessageSize)")
        }
    }

    /// Validates text received so far of a frame still arriving, so invalid UTF-8 fails
    /// the connection without waiting for the rest of the frame.
    private mutating func validatePartialText() throws(WebSocketError) {
        guard let header = currentHeader, !header.opcode.isControl, message?.isText == true else { return }
        let partial = parser.partialPayload
        guard partial.count > validatedInFrame else { return }
        try validateText(partial[validatedInFrame...], at: header.payloadOffset + validatedInFrame)
        validatedInFrame = partial.count
    }

    private mutating func validateText(_ bytes: ArraySlice<UInt8>, at offset: Int) throws(WebSocketError) {
        guard let bad = message?.validator.validate(bytes) else { return }
        throw WebSocketError(.invalidUTF8, offset: offset + bad, "byte 0x\(String(bytes[bytes.startIndex + bad], radix: 16)) cannot continue valid UTF-8")
    }

    private mutating func complete(_ frame: WebSocketFrame, events: inout [WebSocketEvent]) throws(WebSocketError) {
        guard let header = currentHeader else { return }
        currentHeader = nil
        switch frame.opcode {
        case .text, .binary, .continuation:
            guard let isText = message?.isText else { return }
            if isText {
                try validateText(frame.payload[validatedInFrame...], at: header.payloadOffset + validatedInFrame)
            }
            validatedInFrame = 0
            guard frame.fin else {
                message?.payload.append(contentsOf: frame.payload)
                return
            }
            let whole: [UInt8]
            if message?.payload.isEmpty == false {
                message?.payload.append(contentsOf: frame.payload)
                whole = message?.payload ?? []
            } else {
                whole = frame.payload
            }
            let atBoundary = message?.validator.isAtBoundary ?? true
            message = nil
            if isText {
                guard atBoundary else {
                    throw WebSocketError(.invalidUTF8, offset: header.payloadOffset + frame.payload.count,
                                         "text message ends inside a UTF-8 sequence")
                }
                events.append(.text(String(decoding: whole, as: UTF8.self)))
            } else {
                events.append(.binary(whole))
            }
        case .ping:
            events.append(.sendPong(frame.payload))
        case .pong:
            events.append(.pong(frame.payload))
        case .close:
            let close = try WebSocketClose.parse(payload: frame.payload, offset: header.payloadOffset)
            if state == .open {
                // §5.5.1: reply with a close frame, typically echoing the status code.
                events.append(.sendClose(WebSocketClose(code: close.code)))
            }
            state = .closed
            message = nil
            events.append(.closed(close))
        default:
            break
        }
    }
}
