// The SDK an app depends on: the portable core (`ParleySDKCore`: the client, calls,
// delegates, push, the call integration) and this platform's engines.
@_exported @_spi(ParleyEngines) public import ParleySDKCore
#if os(iOS) || os(macOS)
@_exported public import ParleySDKApple
#if canImport(WebRTC) && canImport(CryptoKit)
public import Foundation

extension ParleyClient {
    /// Creates a client with this platform's engines (`AppleEngines`: URLSession
    /// signaling, libwebrtc media, CryptoKit's HMAC); nothing connects until `start()`.
    /// The Linux initialiser's `caFile` has no counterpart: `https://` is verified against
    /// the system's trust store (a development CA is installed as a profile instead).
    /// - Parameters:
    ///   - applicationKey: the application's key (1-64 of `A-Z a-z 0-9 - _`).
    ///   - environmentHost: the server, `http://host:port` (signaling over `ws://`) or
    ///     `https://host:port` (`wss://`).
    ///   - userId: the user (1-255 of `A-Z a-z 0-9 - _ =`); the tokens must be for this user.
    ///   - cli: the caller id for calls to phone numbers (E.164, `+` and 2-15 digits, the first not 0), or
    ///     nil for the application's default.
    ///   - deviceId: a stable id of this installation; default: random, stable per process.
    ///   - callbackQueue: where delegates are called (a serial queue).
    ///   - pushRegistrationStore: where the push token and key are kept; default: a file
    ///     in Application Support named after the device id.
    ///   - usesCallKitAudioSession: whether calls are reported to CallKit, which then
    ///     activates the audio session (`AppleMediaEngine.init(usesCallKitAudioSession:)`).
    /// - Throws: `ParleyClientError` `invalid_argument` for a bad key, user id, caller id, device id or URL.
    public convenience init(applicationKey: String, environmentHost: String, userId: String, cli: String? = nil, deviceId: String? = nil,
                            callbackQueue: DispatchQueue = .main,
                            pushRegistrationStore: (any ParleyPushRegistrationStore)? = nil,
                            usesCallKitAudioSession: Bool = true) throws(ParleyClientError) {
        let endpoint = try ParleyServerEndpoint(parsing: environmentHost)
        let engines = AppleEngines.make(for: endpoint, usesCallKitAudioSession: usesCallKitAudioSession)
        try self.init(applicationKey: applicationKey, environmentHost: environmentHost, userId: userId, cli: cli, deviceId: deviceId,
                      callbackQueue: callbackQueue, pushRegistrationStore: pushRegistrationStore, engines: engines)
    }
}
#endif
#endif
#if os(Linux)
public import Foundation
// The Linux engines too (`LinuxEngines`, `LinuxMediaEngine`), for a program that mixes
// them with engines of its own, as AppleCheck/'s tests do with the Apple media engine.
@_exported public import ParleySDKLinux

extension ParleyClient {
    /// Creates a client with this platform's engines; nothing connects until `start()`.
    /// - Parameters:
    ///   - applicationKey: the application's key (1-64 of `A-Z a-z 0-9 - _`).
    ///   - environmentHost: the server, `http://host:port` (signaling over `ws://`) or
    ///     `https://host:port` (`wss://`, the server's certificate verified against the
    ///     host name or IP address in the URL).
    ///   - userId: the user (1-255 of `A-Z a-z 0-9 - _ =`); the tokens must be for this user.
    ///   - cli: the caller id for calls to phone numbers (E.164, `+` and 2-15 digits, the first not 0), or
    ///     nil for the application's default.
    ///   - deviceId: a stable id of this installation; default: random, stable per process.
    ///   - callbackQueue: where delegates are called (a serial queue).
    ///   - pushRegistrationStore: where the push token and key are kept; default: a file
    ///     in Application Support named after the device id. Give a stable `deviceId`
    ///     when using push: a push is verified against the device it was sent to.
    ///   - caFile: for `https://`, a PEM file of the CAs to trust instead of the system's
    ///     (a development server with a self-signed CA); nil trusts the system store.
    /// - Throws: `ParleyClientError` `invalid_argument` for a bad key, user id, caller id,
    ///   device id, URL or CA file.
    public convenience init(applicationKey: String, environmentHost: String, userId: String, cli: String? = nil, deviceId: String? = nil,
                            callbackQueue: DispatchQueue = .main,
                            pushRegistrationStore: (any ParleyPushRegistrationStore)? = nil,
                            caFile: String? = nil) throws(ParleyClientError) {
        let endpoint = try ParleyServerEndpoint(parsing: environmentHost)
        let engines = try LinuxEngines.make(for: endpoint, caFile: caFile)
        try self.init(applicationKey: applicationKey, environmentHost: environmentHost, userId: userId, cli: cli, deviceId: deviceId,
                      callbackQueue: callbackQueue, pushRegistrationStore: pushRegistrationStore, engines: engines)
    }

    /// Reads and verifies a push's data before any client exists: the device it names
    /// is looked up in the default file store a client with that device id keeps, and
    /// the push verified with that registration's key (OpenSSL's HMAC). See the instance
    /// method for what the result holds.
    public static func queryPushNotificationPayload(_ payload: [AnyHashable: Any]) -> ParleyNotificationResult {
        queryPushNotificationPayload(payload, hmacSHA256: LinuxEngines.hmacSHA256)
    }
}
#endif
