/// The application's side of a `ParleyClient`: tokens, start and failure. Called on the
/// client's `callbackQueue`.
public protocol ParleyClientDelegate: AnyObject {
    /// The client needs a user token (a JWT from the application's backend) to connect.
    /// Asked before every connection, reconnects included, because each token's nonce
    /// works once. Answer through `callback`, from any thread, exactly once.
    func clientRequiresRegistrationCredentials(_ client: ParleyClient, withCallback callback: ParleyClientRegistration)
    /// The client is connected and authenticated; calls can be placed and received.
    func clientDidStart(_ client: ParleyClient)
    /// The client stopped: a refused token (`ParleyClientError` with the `token_*` code),
    /// an unreachable server, or a close it must not retry. `start()` tries again.
    func clientDidFail(_ client: ParleyClient, error: any Error)
}
