/// The platform side of the SDK: everything the portable core drives but cannot do in
/// portable Swift. The core (`ParleyClient`, calls, push verification, the call
/// integration) decides; the engines carry it out.
///
/// - On Linux, `ParleySDK` supplies the signaling transport over our own WebSocket client,
///   the media engine over our own media leg and the HMAC over OpenSSL
///   (`ParleyClient(applicationKey:environmentHost:userId:...)` picks them).
/// - On Apple platforms the transport is `URLSessionWebSocketTask`, the media engine
///   Google's libwebrtc and the HMAC CryptoKit's (docs/sdk.md says what exists).
///
/// Tests and other platforms may give their own.
public struct ParleyEngines: Sendable {
    /// Opens signaling connections to the server.
    public var transport: any ParleySignalingTransportFactory
    /// Makes each call's media.
    public var media: any ParleyMediaEngine
    /// HMAC-SHA256 of `message` under `key` (32 bytes out), or nil if the platform
    /// cannot compute it. Push payloads are verified with it.
    public var hmacSHA256: @Sendable (_ key: [UInt8], _ message: [UInt8]) -> [UInt8]?

    /// Engines from their parts.
    public init(transport: any ParleySignalingTransportFactory, media: any ParleyMediaEngine,
                hmacSHA256: @escaping @Sendable (_ key: [UInt8], _ message: [UInt8]) -> [UInt8]?) {
        self.transport = transport
        self.media = media
        self.hmacSHA256 = hmacSHA256
    }
}
