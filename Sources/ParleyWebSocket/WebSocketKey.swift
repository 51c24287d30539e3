import ParleyWireCore
internal import ParleyCrypto

/// The Sec-WebSocket-Key nonce: 16 bytes, sent base64-encoded (RFC 6455 §4.1).
public struct WebSocketKey: Sendable, Hashable, CustomStringConvertible {
    /// The GUID every server appends to the key before hashing (§1.3, §4.2.2).
    static let acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// The 16 nonce bytes.
    public let bytes: [UInt8]

    /// A key from 16 random bytes the caller drew (for example `SecureRandom.bytes(16)`);
    /// nil for any other count.
    public init?(nonce: some Collection<UInt8>) {
        guard nonce.count == 16 else { return nil }
        bytes = Array(bytes: nonce)
    }

    /// A key from its header value; nil unless it is strict base64 of exactly 16 bytes.
    public init?(base64: some StringProtocol) {
        guard let decoded = try? Base64.decode(base64), decoded.count == 16 else { return nil }
        bytes = decoded
    }

    /// The header value: 24 characters of base64.
    public var base64: String { Base64.encode(bytes) }

    public var description: String { base64 }

    /// Sec-WebSocket-Accept for a key header value: base64(SHA-1(key + GUID)) (§4.2.2 item 5.4).
    /// The value is hashed exactly as sent, without decoding it.
    public static func acceptValue(forKey key: String) throws(WebSocketError) -> String {
        do {
            return Base64.encode(try Digest.hash(.sha1, Array((key + acceptGUID).utf8)))
        } catch {
            throw WebSocketError(.cryptoFailure, "SHA-1 for Sec-WebSocket-Accept failed: \(error)")
        }
    }

    /// Sec-WebSocket-Accept a server must answer this key with.
    public func acceptValue() throws(WebSocketError) -> String {
        try Self.acceptValue(forKey: base64)
    }
}
