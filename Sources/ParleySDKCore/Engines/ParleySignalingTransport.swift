public import Foundation

/// What a signaling connection reports, from a thread of its own.
public enum ParleySignalingTransportEvent: Sendable {
    /// Connected and the server chose the `parley.v1` subprotocol. `localHost` is this
    /// side's address on the connection (an IP literal), where media legs should bind;
    /// nil if the platform does not say.
    case opened(localHost: String?)
    /// The connection could not be made or was lost before it opened; `message` says why.
    case failed(String)
    /// One text frame from the server (UTF-8 bytes).
    case message([UInt8])
    /// The server closed the connection (or it broke: 1006) with this code and reason.
    case closed(code: UInt16, reason: String)
}

/// Makes one WebSocket connection per `open()` to the server's signaling endpoint
/// (`endpoint.webSocketURL`, subprotocol `parley.v1`, docs/protocol.md).
public protocol ParleySignalingTransportFactory: Sendable {
    /// A connection that reports to `handler`; nothing happens until its `open()`.
    func makeTransport(endpoint: ParleyServerEndpoint,
                       handler: @escaping @Sendable (ParleySignalingTransportEvent) -> Void) -> any ParleySignalingTransport
}

/// One signaling connection: a WebSocket carrying text frames.
///
/// Contract: after `open()`, exactly one of `opened` or `failed` is reported first; after
/// `opened`, any number of `message`s, then at most one `closed` or `failed`, except that
/// nothing follows a `close(code:)` the client asked for. Events come in order, one at a
/// time, from any thread.
public protocol ParleySignalingTransport: AnyObject, Sendable {
    /// Connects (in the background) and starts reporting.
    func open()
    /// Sends one text frame; false if the connection is not open.
    @discardableResult
    func send(_ text: String) -> Bool
    /// Closes with `code` (in the background); no event is reported after it.
    func close(code: UInt16)
    /// Left once the connection is done with: failed, closed by the server, or its close
    /// frame sent after `close(code:)`. A process that exits after it loses nothing.
    var finished: DispatchGroup { get }
}
