import ParleyHTTP

/// Collects the bytes of an HTTP/1.1 head (the 101 response on a client; a server that
/// runs ParleyHTTP's request parser validates the request it read instead) until the
/// empty line that ends it, within a size limit.
///
/// ```swift
/// var reader = WebSocketHandshakeReader()
/// switch try reader.append(chunk) {
/// case .needMoreBytes: break                                   // read again
/// case .complete(let head, let remainder):
///     let request = try WebSocketUpgradeRequest.parse(head)
///     // `remainder` is the start of the frame stream: feed it to the connection.
/// }
/// ```
public struct WebSocketHandshakeReader: Sendable {
    /// Progress after a chunk.
    public enum Progress: Sendable, Hashable {
        /// The empty line has not arrived yet.
        case needMoreBytes
        /// `head` is the whole head including its final CRLF CRLF; `remainder` are the
        /// bytes after it, which belong to the frame stream.
        case complete(head: [UInt8], remainder: [UInt8])
    }

    /// 8 KiB, the limit common HTTP servers apply to a request head.
    public static let defaultMaxHeadSize = 8192

    /// Largest head accepted, counting its final CRLF CRLF.
    public let maxHeadSize: Int

    private var buffer: [UInt8] = []
    /// Where the next search for CRLF CRLF starts.
    private var searchFrom = 0
    private var head: [UInt8]? = nil

    /// A reader refusing heads longer than `maxHeadSize` bytes.
    public init(maxHeadSize: Int = defaultMaxHeadSize) {
        self.maxHeadSize = maxHeadSize
    }

    /// Adds received bytes. Throws `headTooLarge` once `maxHeadSize` bytes have arrived
    /// without the end of the head. After `.complete`, further bytes are returned whole
    /// as the remainder.
    public mutating func append(_ bytes: some Sequence<UInt8>) throws(WebSocketError) -> Progress {
        if let head { return .complete(head: head, remainder: Array(bytes: bytes)) }
        buffer.appendBytes(bytes)
        // Resume three bytes back: the terminator may straddle two chunks.
        if let end = HTTPGrammar.endOfHead(in: buffer, from: searchFrom - 3), end <= maxHeadSize {
            let head = Array(buffer[0..<end])
            let remainder = Array(buffer[end...])
            self.head = head
            buffer = []
            return .complete(head: head, remainder: remainder)
        }
        guard buffer.count < maxHeadSize else {
            throw WebSocketError(.headTooLarge, offset: maxHeadSize,
                                 "no end of the HTTP head (CRLF CRLF) within \(maxHeadSize) bytes")
        }
        searchFrom = buffer.count
        return .needMoreBytes
    }
}
