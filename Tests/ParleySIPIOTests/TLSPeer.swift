import ParleyCrypto
import ParleyNetCore
import ParleyNetLinux
import ParleySIP
import ParleySIPIO
import Synchronization

/// A test's SIP peer over one TLS connection, a client of the transport's TLS listener:
/// connects, completes the handshake verifying the server for `serverName` against
/// `caFile`, then writes messages and reads framed messages back. Every wait is bounded.
final class TLSPeer {
    let socket: TCPSocket
    private let tls: TLSConnection
    private var framer = SIPStreamFramer()
    private var plaintext: [UInt8] = []
    private var sawEnd = false

    /// Throws the TLS error when the handshake fails, `PeerFailure` when it does not
    /// finish within five seconds.
    init(connectingTo address: SocketAddress, caFile: String, serverName: String = "127.0.0.1") throws {
        socket = try TCPSocket.connect(to: address, timeout: .seconds(5))
        do {
            tls = try TLSConnection(context: try TLSContext.client(caFile: caFile), serverName: serverName)
            try writeRaw(tls.start().send)
            let deadline = ContinuousClock.now.advanced(by: .seconds(5))
            while tls.state == .handshaking {
                guard let chunk = try readRaw(until: deadline) else { throw PeerFailure("the TLS handshake did not finish") }
                let output = tls.receive(chunk)
                try writeRaw(output.send)
                if let error = output.error { throw error }
                plaintext += output.received
            }
        } catch {
            socket.close()
            throw error
        }
    }

    deinit { socket.close() }

    /// Encrypts and writes `bytes`.
    func write(_ bytes: [UInt8]) throws {
        let output = tls.write(bytes)
        if let error = output.error { throw error }
        try writeRaw(output.send)
    }

    /// Writes `bytes` on the socket as they are, outside TLS.
    func writeRaw(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = try socket.write(bytes, from: offset)
            if written == 0, !socket.waitUntilWritable(timeout: .seconds(5)) { throw PeerFailure("the server does not read") }
            offset += written
        }
    }

    /// The next message (keepalives skipped); nil at the end of the stream or after
    /// `timeout`.
    func nextMessage(timeout: Duration = .seconds(5)) throws -> SIPMessage? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            switch try framer.next(in: plaintext) {
            case .message(let message, let consumed):
                plaintext.removeFirst(consumed)
                return message
            case .ping(let consumed), .pong(let consumed):
                plaintext.removeFirst(consumed)
                continue
            case .invalidMessage(let error, _):
                throw PeerFailure("the server sent an invalid message: \(error)")
            case .needMoreBytes:
                break
            }
            if sawEnd { return nil }
            guard let chunk = try readRaw(until: deadline) else { return nil }
            let output = tls.receive(chunk)
            try writeRaw(output.send)
            plaintext += output.received
            if output.error != nil || output.didClose { sawEnd = true }
        }
    }

    /// Whether the server ends the connection (FIN, reset, or close_notify) within
    /// `timeout`; what it sends before is read and dropped.
    func isClosedByServer(within timeout: Duration) -> Bool {
        if sawEnd { return true }
        return waitForEnd(of: socket, within: timeout)
    }

    /// The next chunk of ciphertext; nil at the end of the stream or the deadline.
    private func readRaw(until deadline: ContinuousClock.Instant) throws -> [UInt8]? {
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero, socket.waitUntilReadable(timeout: remaining) else { return nil }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let result: TCPSocket.ReadResult
            do { result = try socket.read(into: &chunk) } catch {
                sawEnd = true
                return nil
            }
            switch result {
            case .bytes(let count): return Array(chunk[..<count])
            case .endOfStream:
                sawEnd = true
                return nil
            case .wouldBlock: continue
            }
        }
    }
}

/// Whether the other side ends `socket` (FIN or reset) within `timeout`, reading and
/// dropping whatever comes before (a TLS alert, say).
func waitForEnd(of socket: TCPSocket, within timeout: Duration) -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero, socket.waitUntilReadable(timeout: remaining) else { return false }
        guard let result = try? socket.read(into: &chunk) else { return true }
        switch result {
        case .bytes: continue
        case .endOfStream: return true
        case .wouldBlock: continue
        }
    }
}

/// A delegate that keeps what it got and what could not be sent, and answers requests
/// other than ACK with 200 when `answers` is set.
final class TLSRecordingDelegate: SIPTransportDelegate {
    private let messages = Mutex<[(SIPMessage, SIPMessageSource)]>([])
    private let failures = Mutex<[(SIPMessage, String)]>([])
    let answers: Bool

    init(answers: Bool = false) {
        self.answers = answers
    }

    var received: [(message: SIPMessage, source: SIPMessageSource)] { messages.withLock { $0 }.map { ($0.0, $0.1) } }
    var undelivered: [(message: SIPMessage, reason: String)] { failures.withLock { $0 }.map { ($0.0, $0.1) } }

    func transport(_ transport: SIPTransportServer, received message: SIPMessage, from source: SIPMessageSource) -> SIPDelivery {
        messages.withLock { $0.append((message, source)) }
        if answers, message.isRequest, message.method != .ack, let response = try? message.makeResponse(statusCode: 200, toTag: "answer") {
            transport.sendResponse(response, to: source)
        }
        return .taken
    }

    func transport(_ transport: SIPTransportServer, couldNotSend message: SIPMessage, to destination: SocketAddress, reason: String) {
        failures.withLock { $0.append((message, reason)) }
    }
}
