/// What `SIPStreamFramer.next(in:)` found at the start of a stream's unread bytes.
public enum SIPStreamFrame: Sendable, Hashable {
    /// A whole message, `consumed` bytes long.
    case message(SIPMessage, consumed: Int)
    /// A whole message that does not parse (its framing is intact): act on the error's
    /// disposition, drop `consumed` bytes and carry on reading the stream.
    case invalidMessage(SIPError, consumed: Int)
    /// A keepalive ping, CRLF CRLF (RFC 5626 §4.4.1): answer with one CRLF. A ping split
    /// between two reads comes as a pong, then a ping of 2 bytes.
    case ping(consumed: Int)
    /// A keepalive pong, or a line break before a start line (RFC 3261 §7.5): skip it.
    case pong(consumed: Int)
    /// The message is not complete yet.
    case needMoreBytes
}

/// Frames SIP messages out of a TCP or TLS byte stream (RFC 3261 §18.3): the head ends at
/// the first empty line, the body is exactly Content-Length bytes, which a message over a
/// stream must carry.
///
/// Call `next(in:)` with the connection's unread bytes; after a result with `consumed`,
/// drop that many bytes from the front before the next call (the framer remembers how far
/// it has searched, so it never rescans). A thrown `SIPError` means the stream can no
/// longer be framed (`closesConnection` is set): answer if its disposition says so, then
/// close. Nothing past `SIPLimits.maxMessageBytes` is buffered waiting for an empty line.
public struct SIPStreamFramer: Sendable {
    /// The limits every framed message is held to.
    public let limits: SIPLimits
    /// Bytes of the current message already searched for its empty line.
    private var searched = 0
    /// The current message's head end and total length, once its head is in.
    private var pending: (headEnd: Int, total: Int)?
    /// The last frame was a CRLF that ended the bytes read so far: another CRLF right
    /// after it completes a ping that arrived in two reads.
    private var pongEndedBuffer = false

    /// A framer for one connection.
    public init(limits: SIPLimits = .default) {
        self.limits = limits
    }

    /// Looks at the front of `buffer` (the stream's unread bytes).
    public mutating func next(in buffer: [UInt8]) throws(SIPError) -> SIPStreamFrame {
        try next(in: buffer[...])
    }

    /// Looks at the front of `buffer` (the stream's unread bytes).
    public mutating func next(in buffer: ArraySlice<UInt8>) throws(SIPError) -> SIPStreamFrame {
        let base = buffer.startIndex
        let count = buffer.count
        guard count > 0 else { return .needMoreBytes }
        if pending == nil, searched == 0, buffer[base] == SIPGrammar.cr {
            if count < 2 { return .needMoreBytes }
            if buffer[base + 1] == SIPGrammar.lf {
                if count >= 4, buffer[base + 2] == SIPGrammar.cr, buffer[base + 3] == SIPGrammar.lf {
                    pongEndedBuffer = false
                    return .ping(consumed: 4)
                }
                if count == 3, buffer[base + 2] == SIPGrammar.cr { return .needMoreBytes }
                if pongEndedBuffer {
                    pongEndedBuffer = false
                    return .ping(consumed: 2)
                }
                pongEndedBuffer = count == 2
                return .pong(consumed: 2)
            }
        }
        pongEndedBuffer = false
        let headEnd: Int
        let total: Int
        if let pending {
            (headEnd, total) = pending
        } else {
            let limit = min(buffer.endIndex, base + limits.maxMessageBytes)
            guard let end = SIPHeadReader.endOfHead(buffer, from: base + max(0, searched - 3), limit: limit) else {
                if count >= limits.maxMessageBytes {
                    throw SIPError(.messageTooLarge, "no end of the head within \(limits.maxMessageBytes) bytes").dropped(closesConnection: true)
                }
                searched = count
                return .needMoreBytes
            }
            headEnd = end - base
            let head = SIPHeadReader(limits: limits).read(buffer, range: base..<end, startLine: true)
            if let problem = head.problem, problem.kind == .limitExceeded {
                throw problem.dropped(closesConnection: true)
            }
            let length: Int
            do throws(SIPError) {
                guard let declared = try SIPMessageParser.contentLength(head) else {
                    throw SIPError(.missingContentLength, "no Content-Length on a stream transport")
                }
                length = declared
            } catch {
                throw error.placed(isResponse: head.isResponse, headers: head.headers, closesConnection: true)
            }
            total = headEnd + 4 + length
            guard total <= limits.maxMessageBytes else {
                throw SIPError(.messageTooLarge, "a message of \(total) bytes is longer than the limit of \(limits.maxMessageBytes)")
                    .placed(isResponse: head.isResponse, headers: head.headers, closesConnection: true)
            }
            pending = (headEnd, total)
        }
        guard count >= total else { return .needMoreBytes }
        pending = nil
        searched = 0
        let head = SIPHeadReader(limits: limits).read(buffer, range: base..<(base + headEnd), startLine: true)
        do throws(SIPError) {
            let message = try SIPMessageParser.build(head, body: Array(buffer[(base + headEnd + 4)..<(base + total)]))
            return .message(message, consumed: total)
        } catch {
            return .invalidMessage(error, consumed: total)
        }
    }
}
