import Foundation
import ParleyAuth
import ParleyCrypto
import ParleyWebSocketClientIO
import ParleyNetCore
import ParleyServer
import ParleySignaling
import ParleyStore
import Synchronization
import Testing

/// A real `ParleyServer` on loopback with its store in a fresh temporary directory.
final class ServerHarness: Sendable {
    let server: ParleyServer
    let directory: String
    let application: Application
    let lines = LogLines()

    static func configuration(directory: String, _ adjust: (inout ServerConfiguration) -> Void = { _ in }) -> ServerConfiguration {
        var configuration = ServerConfiguration(dataDirectory: directory, listenAddresses: [.ipv4Loopback(port: 0)])
        configuration.mediaBindAddress = .ipv4Loopback(port: 0)
        // A random slice of ports per server: the pool skips ports other processes hold.
        let base = UInt16(21_000 + Int.random(in: 0..<400) * 100)
        configuration.mediaPorts = base...(base + 99)
        configuration.edgeLoopCount = 1
        adjust(&configuration)
        return configuration
    }

    static func temporaryDirectory() -> String {
        NSTemporaryDirectory() + "parley-server-tests-" + UUID().uuidString
    }

    /// The directory is removed at the end only when the harness chose it.
    private let ownsDirectory: Bool

    init(directory: String? = nil, startsServer: Bool = true, _ adjust: (inout ServerConfiguration) -> Void = { _ in }) throws {
        ownsDirectory = directory == nil
        let directory = directory ?? Self.temporaryDirectory()
        self.directory = directory
        let lines = self.lines
        let log = ServerLog(level: .debug) { line in lines.append(line) }
        let configuration = Self.configuration(directory: directory, adjust)
        server = try ParleyServer(configuration: configuration, stores: .sqlite(dataDirectory: configuration.dataDirectory), log: log)
        if let development = server.developmentApplication {
            application = development
        } else {
            application = try #require(try Self.query(server) { (store) throws(StoreError) in try store.applications() }.first)
        }
        if startsServer { try server.start() }
    }

    var address: SocketAddress { server.localAddresses[0] }

    func token(for user: String, issuedAt: Int64? = nil, lifetime: Int64 = 600, secret: String? = nil,
               applicationKey: String? = nil) throws -> String {
        try UserToken.mint(applicationKey: applicationKey ?? application.key, secret: secret ?? application.secret, userID: user,
                           issuedAt: issuedAt ?? Int64(Date().timeIntervalSince1970), lifetime: lifetime,
                           nonce: try UserToken.randomNonce())
    }

    /// A raw protocol client, connected and (unless `hello` is false) authenticated.
    func device(_ user: String, deviceID: String? = nil, resume: String? = nil) throws -> TestDevice {
        let device = try TestDevice(address: address)
        let reply = try device.hello(appKey: application.key, token: try token(for: user), deviceID: deviceID ?? "\(user)-phone",
                                     resume: resume)
        guard case .helloOK = reply else {
            Issue.record("hello refused: \(reply)")
            throw TestFailure("hello refused")
        }
        return device
    }

    func storedCall(_ id: String) throws -> StoredCall? {
        try query { (store) throws(StoreError) in try store.call(id: id) }
    }

    func query<T>(_ body: (any CallStore) throws(StoreError) -> T) throws -> T {
        try Self.query(server, body)
    }

    static func query<T>(_ server: ParleyServer, _ body: (any CallStore) throws(StoreError) -> T) throws -> T {
        try server.store.performAndWait(body)
    }

    /// Waits (bounded) until the stored call satisfies `predicate`.
    func waitForStoredCall(_ id: String, timeout: Duration = .seconds(5), _ predicate: (StoredCall) -> Bool) throws -> StoredCall? {
        let deadline = ContinuousClock.now + timeout
        var last: StoredCall?
        while ContinuousClock.now < deadline {
            last = try storedCall(id)
            if let last, predicate(last) { return last }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return last
    }

    var log: String { lines.text }

    deinit {
        server.shutdown()
        if ProcessInfo.processInfo.environment["PARLEY_SERVER_TEST_LOG"] != nil { print(log) }
        if ownsDirectory { try? FileManager.default.removeItem(atPath: directory) }
    }
}

/// The server's log lines, kept for failure messages.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var text: String { lines.withLock { $0.joined(separator: "\n") } }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One device speaking the protocol over a blocking `WebSocketClient`.
final class TestDevice {
    let client: WebSocketClient
    private var nextID = 1

    init(address: SocketAddress, subprotocols: [String] = ["parley.v1"], tls: TLSContext? = nil) throws {
        client = try WebSocketClient(connectingTo: address, path: "/v1/ws", subprotocols: subprotocols, timeout: .seconds(5), tls: tls)
    }

    func requestID() -> String {
        defer { nextID += 1 }
        return "r\(nextID)"
    }

    func hello(appKey: String, token: String, deviceID: String, resume: String? = nil) throws -> SignalingMessage {
        let id = requestID()
        try send(.hello(.init(requestID: id, appKey: appKey, token: token, deviceID: deviceID,
                              sdk: .init(name: "server-tests", version: "1"), capabilities: ["audio"], resumeSessionID: resume)))
        return try expectMessage()
    }

    func send(_ message: SignalingMessage) throws {
        try client.send(.text(SignalingCodec.encodeToString(message)))
    }

    func sendText(_ text: String) throws {
        try client.send(.text(text))
    }

    enum Received: CustomStringConvertible {
        case message(SignalingMessage)
        case closed(UInt16?)
        case timeout
        var description: String {
            switch self {
            case .message(let message): SignalingCodec.encodeToString(message)
            case .closed(let code): "closed \(code.map(String.init) ?? "-")"
            case .timeout: "timeout"
            }
        }
    }

    func receive(timeout: Duration = .seconds(5)) throws -> Received {
        switch try client.receive(timeout: timeout) {
        case .message(.text(let text))?:
            return .message(try SignalingCodec.decode(text))
        case .message(.binary)?:
            throw TestFailure("binary frame from the server")
        case .closed(let close)?:
            return .closed(close.code?.rawValue)
        case nil:
            return .timeout
        }
    }

    func expectMessage(timeout: Duration = .seconds(5)) throws -> SignalingMessage {
        let received = try receive(timeout: timeout)
        guard case .message(let message) = received else { throw TestFailure("expected a message, got \(received)") }
        return message
    }

    /// The next message, which must be of `type`.
    @discardableResult
    func expect(_ type: SignalingMessageType, timeout: Duration = .seconds(5)) throws -> SignalingMessage {
        let message = try expectMessage(timeout: timeout)
        guard message.type == type else {
            throw TestFailure("expected \(type.rawValue), got \(SignalingCodec.encodeToString(message))")
        }
        return message
    }

    /// Waits for the close and returns its code.
    func expectClose(timeout: Duration = .seconds(5)) throws -> UInt16? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            switch try receive(timeout: deadline - ContinuousClock.now) {
            case .closed(let code): return code
            case .message: continue
            case .timeout: break
            }
        }
        throw TestFailure("no close within \(timeout)")
    }

    /// Closes with 1000: the device logs out (its session ends, its calls are hung up).
    func close() {
        client.close()
    }

    /// Drops the TCP connection without a close frame, as a network change does: the
    /// session can be resumed within the reconnect grace.
    func drop() {
        client.socket.close()
    }
}

extension SignalingMessage {
    var errorCode: String? {
        if case .error(let error) = self { return error.code.rawValue }
        return nil
    }
}
