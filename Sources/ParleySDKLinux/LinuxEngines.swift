public import ParleySDKCore
import ParleyCrypto

/// The SDK's engines on Linux: our WebSocket client (with OpenSSL for `wss://`), our
/// media leg, and OpenSSL's HMAC.
public enum LinuxEngines {
    /// Engines for `endpoint`; `caFile` (PEM) replaces the system's CAs for `https://`;
    /// `.device` calls capture and play on `audioDevice`.
    /// - Throws: `ParleyClientError` `invalid_argument` for a CA file with `http://` or
    ///   TLS that cannot be set up.
    public static func make(for endpoint: ParleyServerEndpoint, caFile: String?,
                            audioDevice: LinuxAudioDevice = .systemDefault) throws(ParleyClientError) -> ParleyEngines {
        let tls: TLSContext?
        if endpoint.isSecure {
            do {
                tls = try TLSContext.client(caFile: caFile)
            } catch {
                throw ParleyClientError(code: "invalid_argument", message: "cannot set up TLS: \(error)")
            }
        } else {
            guard caFile == nil else {
                throw ParleyClientError(code: "invalid_argument", message: "a CA file is only used with https:// (got \(endpoint.environmentHost))")
            }
            tls = nil
        }
        return ParleyEngines(transport: LinuxSignalingTransportFactory(tls: tls), media: LinuxMediaEngine(device: audioDevice),
                             hmacSHA256: hmacSHA256)
    }

    /// HMAC-SHA256 over OpenSSL (nil only if OpenSSL fails).
    public static let hmacSHA256: @Sendable ([UInt8], [UInt8]) -> [UInt8]? = { key, message in
        try? Digest.hmac(.sha256, key: key, message)
    }
}

/// Opens `WebSocketTransport`s with one TLS context shared by all of them.
struct LinuxSignalingTransportFactory: ParleySignalingTransportFactory {
    let tls: TLSContext?

    func makeTransport(endpoint: ParleyServerEndpoint,
                       handler: @escaping @Sendable (ParleySignalingTransportEvent) -> Void) -> any ParleySignalingTransport {
        WebSocketTransport(endpoint: endpoint, tls: tls, handler: handler)
    }
}
