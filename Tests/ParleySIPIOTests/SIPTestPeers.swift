// Shared by a link with Tests/ParleyEndToEndTests (the torture replay and the flood
// against parleyd use these peers).
import Glibc
import ParleyNetCore
import ParleyNetLinux
import ParleySIP
import ParleySIPIO
import ParleyWireCore
import Testing

/// A test's SIP peer over UDP: a socket on loopback (or another address) and bounded
/// waits for what comes back.
final class UDPPeer {
    let socket: UDPSocket
    var address: SocketAddress { socket.localAddress }

    init(bindingTo address: SocketAddress = .ipv4Loopback(port: 0)) throws {
        socket = try UDPSocket(bindingTo: address)
    }

    deinit { socket.close() }

    func send(_ bytes: [UInt8], to destination: SocketAddress) throws {
        guard try socket.send(bytes, to: destination) else { throw PeerFailure("the socket buffer is full") }
    }

    /// The next datagram within `timeout`; nil when none came.
    func receive(timeout: Duration = .seconds(5)) throws -> (bytes: [UInt8], source: SocketAddress)? {
        guard waitReadable(socket.fileDescriptor, timeout: timeout) else { return nil }
        var storage = [UInt8](repeating: 0, count: 65_536)
        let received = try storage.withUnsafeMutableBytes { buffer in try socket.receive(into: buffer) }
        guard let (count, source) = received else { return nil }
        return (Array(storage[..<count]), source)
    }

    /// The next datagram as a SIP message within `timeout`; nil when none came.
    func receiveMessage(timeout: Duration = .seconds(5)) throws -> SIPMessage? {
        guard let (bytes, _) = try receive(timeout: timeout) else { return nil }
        return try SIPMessage(datagram: bytes)
    }
}

/// What a `TCPPeer` read next.
enum StreamEvent: Equatable {
    case message(SIPMessage)
    /// A CRLF (a keepalive pong).
    case keepalive
    /// The server closed the connection.
    case closed
    /// Nothing within the wait.
    case timedOut
}

/// A test's SIP peer over one TCP connection: writes bytes as given (whole or in pieces),
/// reads framed messages back with `SIPStreamFramer`, every wait bounded.
final class TCPPeer {
    let socket: TCPSocket
    private var framer = SIPStreamFramer()
    private var buffer: [UInt8] = []
    private var sawEnd = false

    init(connectingTo address: SocketAddress) throws {
        socket = try TCPSocket.connect(to: address, timeout: .seconds(5))
    }

    init(socket: TCPSocket) {
        self.socket = socket
    }

    deinit { socket.close() }

    /// Writes all of `bytes`, waiting while the socket is full.
    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = try socket.write(bytes, from: offset)
            if written == 0, !socket.waitUntilWritable(timeout: .seconds(5)) { throw PeerFailure("the server does not read") }
            offset += written
        }
    }

    /// The next message or keepalive, the end of the stream, or `.timedOut`.
    func next(timeout: Duration = .seconds(5)) throws -> StreamEvent {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            switch try framer.next(in: buffer) {
            case .message(let message, let consumed):
                buffer.removeFirst(consumed)
                return .message(message)
            case .ping(let consumed), .pong(let consumed):
                buffer.removeFirst(consumed)
                return .keepalive
            case .invalidMessage(let error, _):
                throw PeerFailure("the server sent an invalid message: \(error)")
            case .needMoreBytes:
                break
            }
            if sawEnd { return .closed }
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero, socket.waitUntilReadable(timeout: remaining) else { return .timedOut }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let result: TCPSocket.ReadResult
            do {
                result = try socket.read(into: &chunk)
            } catch {
                // A reset after the server's close is an end like any other.
                sawEnd = true
                continue
            }
            switch result {
            case .bytes(let count): buffer += chunk[..<count]
            case .endOfStream: sawEnd = true
            case .wouldBlock: break
            }
        }
    }

    /// The next event that is a message, skipping keepalives; nil at the end or timeout.
    func nextMessage(timeout: Duration = .seconds(5)) throws -> SIPMessage? {
        while true {
            switch try next(timeout: timeout) {
            case .message(let message): return message
            case .keepalive: continue
            case .closed, .timedOut: return nil
            }
        }
    }
}

struct PeerFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Polls `descriptor` for input, at most `timeout`.
func waitReadable(_ descriptor: Int32, timeout: Duration) -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while true {
        let remaining = ContinuousClock.now.duration(to: deadline)
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(&entry, 1, Int32(clamping: max(0, remaining.wholeMillisecondsRoundedUp)))
        if ready > 0 { return true }
        if ready == 0 { return false }
        if errno != EINTR { return false }
    }
}

/// An OPTIONS from `via` (the sent-by as written, `;rport` added when asked).
func options(callID: String, via: String, transport: String = "UDP", rport: Bool = true, extraHeaders: String = "") -> [UInt8] {
    let text = """
        OPTIONS sip:parley@example.test SIP/2.0\r
        Via: SIP/2.0/\(transport) \(via);branch=z9hG4bK-\(callID)\(rport ? ";rport" : "")\r
        Max-Forwards: 70\r
        To: <sip:parley@example.test>\r
        From: <sip:tester@example.test>;tag=t-\(callID)\r
        Call-ID: \(callID)\r
        CSeq: 1 OPTIONS\r
        \(extraHeaders)Content-Length: 0\r
        \r

        """
    return Array(text.utf8)
}

extension Array where Element == UInt8 {
    /// The same message with another method in the Request-Line and CSeq.
    func replacingOptions(of method: String = "OPTIONS", with other: String) -> [UInt8] {
        replacingText(method, with: other)
    }

    /// The same bytes, read as text, with every `text` replaced.
    func replacingText(_ text: String, with replacement: String) -> [UInt8] {
        Array(String(decoding: self, as: UTF8.self).replacing(text, with: replacement).utf8)
    }
}

/// A server for one test, its stateless responder answering; shut down by the caller.
func startServer(_ configure: (inout SIPTransportConfiguration) -> Void = { _ in },
                 on address: SocketAddress = .ipv4Loopback(port: 0),
                 delegate: any SIPTransportDelegate = SIPStatelessResponder()) throws -> SIPTransportServer {
    var configuration = SIPTransportConfiguration(listenAddress: address)
    configure(&configuration)
    return try SIPTransportServer(configuration: configuration, delegate: delegate)
}

/// Waits (bounded) until `condition` holds on the server's counters.
func eventually(timeout: Duration = .seconds(5), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}
