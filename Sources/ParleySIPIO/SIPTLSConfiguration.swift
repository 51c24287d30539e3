public import ParleyNetCore

/// SIP over TLS (RFC 3261 §26.2) for a `SIPTransportServer`: a listener of its own on a
/// second port, the certificate it presents there, and the trust store its own TLS
/// connections verify peers with.
public struct SIPTLSConfiguration: Sendable, Hashable {
    /// The address and port of the TLS listener (5061 by custom, §19.1.2). Port 0 picks a
    /// free port (`SIPTransportServer.tlsLocalAddress`).
    public var listenAddress: SocketAddress
    /// PEM file with the server certificate first, then any intermediates.
    public var certificateChainFile: String
    /// PEM file with the certificate's private key (unencrypted).
    public var privateKeyFile: String
    /// PEM file of the CAs that certificates of peers this server connects to must chain
    /// to; nil: the system's trust store. Every connection this server opens verifies the
    /// peer's certificate and its name or address; there is no way to skip that.
    public var caFile: String?
    /// A TLS connection, accepted or opened, must finish its handshake within this, or it
    /// is closed (a peer that starts one and stalls holds nothing for longer).
    public var handshakeTimeout: Duration

    /// Defaults: the system's trust store, 10 s for a handshake.
    public init(listenAddress: SocketAddress, certificateChainFile: String, privateKeyFile: String, caFile: String? = nil,
                handshakeTimeout: Duration = .seconds(10)) {
        self.listenAddress = listenAddress
        self.certificateChainFile = certificateChainFile
        self.privateKeyFile = privateKeyFile
        self.caFile = caFile
        self.handshakeTimeout = handshakeTimeout
    }
}
