public import ParleyNetCore
public import ParleySIP

/// What `SIPTransportServer` hands every received message to: the transaction layer
/// (RFC 3261 §17) once it exists, `SIPStatelessResponder` until then.
///
/// The transport calls it on its loop thread (`parley-sip`), one message at a time, with
/// messages that parsed and passed `SIPMessage.validate()`; a request's top Via already
/// carries `received` and `rport` as RFC 3261 §18.2.1 and RFC 3581 §4 say. Malformed
/// input, keepalives and requests over the rate limit never reach it. The handler answers
/// through `SIPTransportServer.sendResponse(_:to:)` (at once or later, from any thread)
/// and must not block: it runs on the thread that reads every SIP socket.
public protocol SIPTransportDelegate: AnyObject, Sendable {
    /// A request or response arrived from `source`.
    func transport(_ transport: SIPTransportServer, received message: SIPMessage, from source: SIPMessageSource) -> SIPDelivery

    /// A message handed to `send` or `sendResponse` for TLS never left: TLS is not
    /// configured, no connection could be opened, or the one it waited on never finished
    /// its handshake (the peer's certificate did not verify, the peer does not speak TLS,
    /// the handshake timeout). `reason` says which. Called on the loop, after the send
    /// returned, so the delegate may act on it (fail the transaction at once rather than
    /// wait for its timer). The default does nothing.
    func transport(_ transport: SIPTransportServer, couldNotSend message: SIPMessage, to destination: SocketAddress,
                   reason: String)
}

extension SIPTransportDelegate {
    /// Nothing: a delegate that keeps no state about what it sent has nothing to undo.
    public func transport(_ transport: SIPTransportServer, couldNotSend message: SIPMessage, to destination: SocketAddress,
                          reason: String) {}
}
