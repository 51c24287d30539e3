import ParleyMediaLegCore

// Follows sdk/objc/api/peerconnection/RTCSSLAdapter.h (`RTC_EXTERN BOOL RTCInitializeSSL(void)`,
// `RTCCleanupSSL`). The mirror's crypto is the root package's OpenSSL and libsrtp: it
// prepares libsrtp, which our media leg otherwise does on its first call. Not
// discardable: Swift warns of an unused result of an imported C function.
/// Initialises the SSL library; returns whether it succeeded. Call once before any peer connection.
public func RTCInitializeSSL() -> Bool {
    MediaLegCore.prepareProcess()
    return true
}

/// Cleans up what `RTCInitializeSSL` set up. The mirror has nothing to clean.
public func RTCCleanupSSL() -> Bool { true }
