import Glibc
import ParleyAuth
import ParleyCallCore
import ParleyWebSocketClientIO
import ParleyNetCore
import ParleySignaling

/// One raw protocol client of the server benchmarks: a blocking `WebSocketClient` on
/// `/v1/ws`, authenticated with a freshly minted user token. Used from one thread at a time.
final class BenchDevice {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let client: WebSocketClient
    let user: String
    /// `hello.ok`'s heartbeat interval: the device pings this often.
    private(set) var heartbeat: Duration = .seconds(20)
    private(set) var lastSent = ContinuousClock.now
    private var nextRequest = 1

    /// Connects and says `hello`; throws unless the answer is `hello.ok`.
    init(address: SocketAddress, credentials: BenchCredentials, user: String, deviceID: String) throws {
        self.user = user
        client = try WebSocketClient(connectingTo: address, path: "/v1/ws", subprotocols: ["parley.v1"], timeout: .seconds(10))
        let now = Int64(time(nil))
        let token = try UserToken.mint(applicationKey: credentials.key, secret: credentials.secret, userID: user,
                                       issuedAt: now, lifetime: 3600, nonce: try UserToken.randomNonce())
        let id = requestID()
        try send(.hello(.init(requestID: id, appKey: credentials.key, token: token, deviceID: deviceID,
                              sdk: .init(name: "parley-bench", version: "1"), capabilities: ["audio"])))
        let reply = try next(timeout: .seconds(10))
        guard case .helloOK(let ok) = reply else { throw Failure(description: "hello refused: \(SignalingCodec.encodeToString(reply))") }
        heartbeat = .milliseconds(ok.heartbeatInterval)
    }

    func requestID() -> String {
        defer { nextRequest += 1 }
        return "b\(nextRequest)"
    }

    func send(_ message: SignalingMessage) throws {
        try client.send(.text(SignalingCodec.encodeToString(message)))
        lastSent = .now
    }

    /// The next message; throws on close, timeout or a frame that is not protocol JSON.
    func next(timeout: Duration) throws -> SignalingMessage {
        switch try client.receive(timeout: timeout) {
        case .message(.text(let text))?: return try SignalingCodec.decode(text)
        case .message(.binary)?: throw Failure(description: "\(user): binary frame from the server")
        case .closed(let close)?: throw Failure(description: "\(user): closed \(close.code.map { String($0.rawValue) } ?? "-") \(close.reason)")
        case nil: throw Failure(description: "\(user): nothing within \(timeout)")
        }
    }

    /// Reads until a message of `type` (about `callID` when given) arrives, skipping the
    /// call's other events; at most 64 messages and `timeout`. An `error` or a `call.ended`
    /// that was not asked for is a failure.
    @discardableResult
    func expect(_ type: SignalingMessageType, callID: String? = nil, replyTo: String? = nil,
               timeout: Duration = .seconds(10)) throws -> SignalingMessage {
        let deadline = ContinuousClock.now + timeout
        for _ in 0..<64 {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { break }
            let message = try next(timeout: remaining)
            if message.type == type && (callID == nil || message.callID == callID) && (replyTo == nil || message.replyTo == replyTo) {
                return message
            }
            switch message {
            case .error, .callEnded:
                throw Failure(description: "\(user): waiting for \(type.rawValue), got \(SignalingCodec.encodeToString(message))")
            default:
                continue
            }
        }
        throw Failure(description: "\(user): no \(type.rawValue) within \(timeout)")
    }

    /// Sends a request and waits for its `result`.
    func request(_ make: (String) -> SignalingMessage) throws {
        let id = requestID()
        try send(make(id))
        try expect(.result, replyTo: id)
    }

    /// Sends `ping` once three quarters of a heartbeat passed since the last send, after
    /// dropping whatever arrived meanwhile (pongs). Returns whether it pinged.
    @discardableResult
    func keepAlive(now: ContinuousClock.Instant) throws -> Bool {
        guard now - lastSent >= heartbeat * 3 / 4 else { return false }
        for _ in 0..<64 {
            guard let event = try client.receive(timeout: .zero) else { break }
            if case .closed(let close) = event {
                throw Failure(description: "\(user): closed \(close.code.map { String($0.rawValue) } ?? "-") while idle")
            }
        }
        try send(.ping(.init(requestID: requestID())))
        return true
    }
}

/// An application's key and secret, for minting user tokens.
struct BenchCredentials: Sendable {
    let key: String
    let secret: String
}
