/// Hears whether the server accepted the device's push token, and whether it dropped it
/// again; `ParleyClient.pushDelegate`, called on the client's `callbackQueue`. Every
/// method has an empty default.
public protocol ParleyPushDelegate: AnyObject {
    /// The server holds the token; pushes for this device can now be verified.
    func clientDidRegisterPushNotificationDeviceToken(_ client: ParleyClient)
    /// `push.register` failed (the server's code, `request_timeout`, or `push_key_missing`
    /// when the server sent no push key). Register again later, e.g. on the next start.
    func client(_ client: ParleyClient, didFailToRegisterPushNotificationDeviceTokenWithError error: any Error)
    /// The server answered `push.unregister` (from `unregisterPushNotificationDeviceToken()`
    /// or `logOut()`): it no longer wakes this device.
    func clientDidUnregisterPushNotificationDeviceToken(_ client: ParleyClient)
    /// `push.unregister` failed: the server's code, `request_timeout` (no answer, or no
    /// session within 30 s), `not_started` (the client was not started), or the client's
    /// own failure. The server may still wake this device: unregister again once started.
    func client(_ client: ParleyClient, didFailToUnregisterPushNotificationDeviceTokenWithError error: any Error)
}

extension ParleyPushDelegate {
    /// Does nothing.
    public func clientDidRegisterPushNotificationDeviceToken(_ client: ParleyClient) {}
    /// Does nothing.
    public func client(_ client: ParleyClient, didFailToRegisterPushNotificationDeviceTokenWithError error: any Error) {}
    /// Does nothing.
    public func clientDidUnregisterPushNotificationDeviceToken(_ client: ParleyClient) {}
    /// Does nothing.
    public func client(_ client: ParleyClient, didFailToUnregisterPushNotificationDeviceTokenWithError error: any Error) {}
}
