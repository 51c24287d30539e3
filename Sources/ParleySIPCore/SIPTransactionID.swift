public import ParleySIP

/// What identifies a transaction (RFC 3261 §17.1.3, §17.2.3): the top Via's branch and
/// the method, and for a server transaction also the top Via's sent-by, since branches
/// are only unique per client.
///
/// An ACK names the INVITE transaction it acknowledges (method INVITE); a CANCEL has a
/// transaction of its own (method CANCEL) with the branch of the INVITE it cancels. A
/// request without an RFC 3261 branch (an RFC 2543 client) is keyed by what §17.2.3 has
/// such requests matched on: Call-ID, From tag, CSeq number, Request-URI and the top Via.
public struct SIPTransactionID: Sendable, Hashable, CustomStringConvertible {
    /// Which side of the transaction we are.
    public enum Role: String, Sendable, Hashable {
        case client, server
    }

    /// Client or server.
    public let role: Role
    /// The branch (for an RFC 2543 request, the fields standing in for one).
    public let branch: String
    /// A server transaction's top Via sent-by, `host:port` with the host lowercased;
    /// empty for a client transaction.
    public let sentBy: String
    /// The request's method; INVITE for an ACK.
    public let method: SIPMethod

    init(role: Role, branch: String, sentBy: String, method: SIPMethod) {
        self.role = role
        self.branch = branch
        self.sentBy = sentBy
        self.method = method == .ack ? .invite : method
    }

    /// The client transaction a request we send, or a response we receive, belongs to:
    /// its top Via's branch and its CSeq method. Nil without a Via branch or CSeq.
    static func client(of message: SIPMessage) -> SIPTransactionID? {
        guard let via = try? message.topVia(), let branch = via.branch, !branch.isEmpty,
              let cseq = try? message.cseq() else { return nil }
        return SIPTransactionID(role: .client, branch: branch, sentBy: "", method: cseq.method)
    }

    /// The server transaction a received request belongs to, as `method` (INVITE to find
    /// the transaction an ACK or a CANCEL refers to). Nil when the request lacks a Via.
    static func server(of request: SIPMessage, as method: SIPMethod? = nil) -> SIPTransactionID? {
        guard let via = try? request.topVia(), let requestMethod = request.method else { return nil }
        let sentBy = SIPText.lowercased(via.host.description) + ":" + String(via.port ?? defaultPort(via))
        let keyMethod = method ?? requestMethod
        if via.hasRFC3261Branch, let branch = via.branch {
            return SIPTransactionID(role: .server, branch: branch, sentBy: sentBy, method: keyMethod)
        }
        // RFC 2543 (§17.2.3): no usable branch, so the request's own fields stand in. The
        // To tag is left out: an ACK carries the tag of our response, the INVITE none.
        let fields = [
            (try? request.callID()) ?? "",
            (try? request.from())?.tag ?? "",
            (try? request.cseq()).map { String($0.sequence) } ?? "",
            request.requestURI?.description ?? "",
            via.branch ?? "",
        ]
        return SIPTransactionID(role: .server, branch: "rfc2543 " + fields.joined(separator: " "), sentBy: sentBy, method: keyMethod)
    }

    private static func defaultPort(_ via: SIPVia) -> UInt16 {
        SIPHop.Transport(name: via.transport)?.defaultPort ?? 5060
    }

    /// `client INVITE z9hG4bK...`, `server BYE z9hG4bK... from 192.0.2.1:5060`.
    public var description: String {
        role == .client ? "client \(method) \(branch)" : "server \(method) \(branch) from \(sentBy)"
    }
}
