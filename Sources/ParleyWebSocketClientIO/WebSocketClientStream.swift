import ParleyNetCore
import ParleyNetLinux
import ParleyCrypto
import Glibc

/// The blocking byte stream under a `WebSocketClient`: a `TCPSocket`, with a
/// `TLSConnection` in between for `wss://`. Reads and writes take a deadline.
final class WebSocketClientStream {
    let socket: TCPSocket
    private let tls: TLSConnection?
    private var buffer = [UInt8](repeating: 0, count: 65536)

    /// Connects and, with `tls`, completes the TLS handshake verifying `serverName`.
    init(connectingTo address: SocketAddress, tls context: TLSContext?, serverName: String, deadline: ContinuousClock.Instant) throws(WebSocketClientError) {
        do {
            socket = try TCPSocket.connect(to: address, timeout: ContinuousClock.now.duration(to: deadline))
        } catch {
            throw .network(error)
        }
        guard let context else {
            tls = nil
            return
        }
        do throws(WebSocketClientError) {
            let session: TLSConnection
            do { session = try TLSConnection(context: context, serverName: serverName) } catch { throw WebSocketClientError.tls(error) }
            tls = session
            var output = session.start()
            // Bounded by the deadline: each turn waits for the server's next bytes.
            while true {
                if !output.send.isEmpty { try Self.writeRaw(output.send, to: socket, deadline: deadline) }
                if let error = output.error { throw WebSocketClientError.tls(error) }
                if output.didClose { throw WebSocketClientError.closed }
                if session.state == .connected { break }
                guard let chunk = try Self.readRaw(socket, into: &buffer, deadline: deadline) else { throw WebSocketClientError.timedOut("TLS handshake") }
                output = chunk.isEmpty ? session.receiveEndOfStream() : session.receive(chunk)
            }
        } catch {
            socket.close()
            throw error
        }
    }

    deinit { socket.close() }

    func close() { socket.close() }

    /// Application bytes read, [] at end of stream, nil on timeout.
    func readSome(deadline: ContinuousClock.Instant) throws(WebSocketClientError) -> [UInt8]? {
        guard let tls else { return try Self.readRaw(socket, into: &buffer, deadline: deadline) }
        // Bounded by the deadline; records that carry no application data (TLS 1.3
        // session tickets) are consumed and the wait goes on.
        while true {
            switch tls.state {
            case .closed: return []
            case .failed(let error): throw .tls(error)
            case .handshaking, .connected: break
            }
            guard let chunk = try Self.readRaw(socket, into: &buffer, deadline: deadline) else { return nil }
            if chunk.isEmpty { return [] }
            let output = tls.receive(chunk)
            if !output.send.isEmpty { try? Self.writeRaw(output.send, to: socket, deadline: deadline) }
            if let error = output.error {
                // Data delivered before a bad record still counts; the error comes next read.
                if !output.received.isEmpty { return output.received }
                throw .tls(error)
            }
            if !output.received.isEmpty { return output.received }
            if output.didClose { return [] }
        }
    }

    /// Writes all of `bytes` (encrypted under TLS) before `deadline`.
    func writeAll(_ bytes: [UInt8], deadline: ContinuousClock.Instant) throws(WebSocketClientError) {
        guard let tls else { return try Self.writeRaw(bytes, to: socket, deadline: deadline) }
        let output = tls.write(bytes)
        if let error = output.error { throw error.kind == .invalidState ? .closed : .tls(error) }
        try Self.writeRaw(output.send, to: socket, deadline: deadline)
    }

    /// Sends close_notify under TLS (best effort); nothing for plain TCP.
    func sendCloseNotify(deadline: ContinuousClock.Instant) {
        guard let tls else { return }
        let output = tls.close()
        if !output.send.isEmpty { try? Self.writeRaw(output.send, to: socket, deadline: deadline) }
    }

    private static func readRaw(_ socket: TCPSocket, into buffer: inout [UInt8], deadline: ContinuousClock.Instant) throws(WebSocketClientError) -> [UInt8]? {
        while true {
            let result: TCPSocket.ReadResult
            do {
                result = try socket.read(into: &buffer)
            } catch {
                if error.errno == ECONNRESET { return [] }
                throw .network(error)
            }
            switch result {
            case .bytes(let count): return Array(buffer[0..<count])
            case .endOfStream: return []
            case .wouldBlock:
                let remaining = ContinuousClock.now.duration(to: deadline)
                guard remaining > .zero, socket.waitUntilReadable(timeout: remaining) else { return nil }
            }
        }
    }

    private static func writeRaw(_ bytes: [UInt8], to socket: TCPSocket, deadline: ContinuousClock.Instant) throws(WebSocketClientError) {
        var offset = 0
        while offset < bytes.count {
            let written: Int
            do {
                written = try socket.write(bytes, from: offset)
            } catch {
                throw .network(error)
            }
            offset += written
            if written == 0 {
                let remaining = ContinuousClock.now.duration(to: deadline)
                guard remaining > .zero, socket.waitUntilWritable(timeout: remaining) else { throw .timedOut("send") }
            }
        }
    }
}
