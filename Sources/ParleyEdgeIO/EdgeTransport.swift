import ParleyNetCore
import ParleyNetLinux
import ParleyCrypto

/// The byte stream under one `EdgeConnection`: a `TCPConnection`, with a `TLSConnection`
/// in between when it was accepted on a TLS listener. Plain and TLS connections share
/// everything above this (HTTP, REST, WebSocket, timeouts).
///
/// `@unchecked Sendable` for the same reason as `TCPConnection`: every call runs on `loop`.
final class EdgeTransport: @unchecked Sendable {
    let tcp: TCPConnection
    private let tls: TLSConnection?
    private let onHandshakeFailure: (CryptoError) -> Void
    private var onRead: ((UnsafeRawBufferPointer) -> Void)?

    init(tcp: TCPConnection, tls: TLSConnection?, onHandshakeFailure: @escaping (CryptoError) -> Void) {
        self.tcp = tcp
        self.tls = tls
        self.onHandshakeFailure = onHandshakeFailure
    }

    var loop: EventLoop { tcp.loop }
    var socket: TCPSocket { tcp.socket }
    var isOpen: Bool { tcp.isOpen }
    var isTLS: Bool { tls != nil }

    func start(onRead: @escaping (UnsafeRawBufferPointer) -> Void, onClose: @escaping (NetError?) -> Void) throws(NetError) {
        guard let tls else {
            try tcp.start(onRead: onRead, onClose: onClose)
            return
        }
        self.onRead = onRead
        try tcp.start(onRead: { [unowned self] bytes in self.receivedTLS(bytes, tls) }, onClose: onClose)
    }

    private func receivedTLS(_ bytes: UnsafeRawBufferPointer, _ tls: TLSConnection) {
        let wasHandshaking = tls.state == .handshaking
        let output = tls.receive(bytes)
        if !output.send.isEmpty { _ = tcp.write(output.send) }
        if let error = output.error {
            if wasHandshaking { onHandshakeFailure(error) }
            tcp.close()
            return
        }
        if !output.received.isEmpty {
            output.received.withUnsafeBytes { onRead?($0) }
        }
        if output.didClose { tcp.close() }
    }

    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        guard let tls else { return tcp.write(bytes) }
        guard tcp.isOpen, !bytes.isEmpty else { return tcp.isOpen }
        let output = tls.write(bytes)
        if !output.send.isEmpty, !tcp.write(output.send) { return false }
        if output.error != nil {
            tcp.close(graceful: false)
            return false
        }
        return true
    }

    func close(graceful: Bool = true) {
        if graceful, let tls, tcp.isOpen {
            let output = tls.close()
            if !output.send.isEmpty { _ = tcp.write(output.send) }
        }
        tcp.close(graceful: graceful)
    }
}
