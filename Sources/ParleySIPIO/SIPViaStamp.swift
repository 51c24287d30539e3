import ParleyNetCore
import ParleySIP

/// What a server transport writes into a received request's top Via (RFC 3261 §18.2.1,
/// RFC 3581 §4), so that its responses find their way back through NATs.
enum SIPViaStamp {
    /// `received` holds the packet's source address when the sent-by is a name or another
    /// address, or when the Via asks for `rport` (RFC 3581 requires it then even if they
    /// are equal); `rport` gets the source port when the Via asks for it, or always with
    /// `forceReturnPort`. Throws when the top Via does not parse (validation has already
    /// refused such a request).
    static func stamp(_ message: inout SIPMessage, source: SocketAddress, forceReturnPort: Bool) throws(SIPError) {
        guard var via = try message.topVia() else { return }
        let returnPort = via.returnPort != nil || forceReturnPort
        if returnPort || via.host.addressBytes != source.hostBytes {
            try via.setReceived(host(of: source))
        }
        if returnPort { via.setReturnPort(source.port) }
        try replaceTopVia(of: &message, with: via)
    }

    /// The source address as a Via host.
    static func host(of address: SocketAddress) -> SIPHost {
        address.family == .ipv4 ? .ipv4(address.hostDescription) : .ipv6(address.hostDescription)
    }

    /// Puts `via` in place of the first Via value, keeping the others and every field's
    /// position.
    static func replaceTopVia(of message: inout SIPMessage, with via: SIPVia) throws(SIPError) {
        guard let index = message.headers.fields.firstIndex(where: { $0.canonicalName == "via" }) else { return }
        message.headers.removeFirstValue(name: "via")
        try message.headers.insert(name: "Via", value: via.description, at: index)
    }
}
