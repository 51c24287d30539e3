import ParleyMediaLegCore

// Follows sdk/objc/api/peerconnection/RTCSSLAdapter.h (`RTC_EXTERN BOOL RTCInitializeSSL(void)`,
// `RTCCleanupSSL`). The mirror's crypto is the root package's OpenSSL and libsrtp: it
// prepares libsrtp, which our media leg otherwise does on its first call.
/// Initialises the SSL library; returns whether it succeeded. Call once before any peer connection.
@discardableResult
public func RTCInitializeSSL() -> Bool {
    MediaLegCore.prepareProcess()
    return true
}

/// Cleans up what `RTCInitializeSSL` set up. The mirror has nothing to clean.
@discardableResult
public func RTCCleanupSSL() -> Bool { true }
