/// Hears whether the server accepted the device's push token; `ParleyClient.pushDelegate`,
/// called on the client's `callbackQueue`. Every method has an empty default.
public protocol ParleyPushDelegate: AnyObject {
    /// The server holds the token; pushes for this device can now be verified.
    func clientDidRegisterPushNotificationDeviceToken(_ client: ParleyClient)
    /// `push.register` failed (the server's code, `request_timeout`, or `push_key_missing`
    /// when the server sent no push key). Register again later, e.g. on the next start.
    func client(_ client: ParleyClient, didFailToRegisterPushNotificationDeviceTokenWithError error: any Error)
}

extension ParleyPushDelegate {
    /// Does nothing.
    public func clientDidRegisterPushNotificationDeviceToken(_ client: ParleyClient) {}
    /// Does nothing.
    public func client(_ client: ParleyClient, didFailToRegisterPushNotificationDeviceTokenWithError error: any Error) {}
}
