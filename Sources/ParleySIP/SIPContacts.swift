/// The Contact header's values (RFC 3261 §20.10): the `*` of a REGISTER that removes every
/// binding, or addresses with their `expires` and `q` parameters.
public enum SIPContacts: Sendable, Hashable {
    /// `Contact: *`.
    case wildcard
    /// One address per value, in order.
    case addresses([SIPNameAddress])

    /// The addresses; empty for the wildcard.
    public var addresses: [SIPNameAddress] {
        if case .addresses(let list) = self { return list }
        return []
    }

    /// Parses the comma-separated elements of every Contact line. A `*` must be the only
    /// value.
    static func parse(_ elements: [Substring]) throws(SIPError) -> SIPContacts {
        if elements.contains(where: { $0 == "*" }) {
            guard elements.count == 1 else { throw SIPError(.malformedHeader, "Contact * must be the only Contact") }
            return .wildcard
        }
        return .addresses(try SIPNameAddress.parseList(elements, requireAngleBrackets: false))
    }
}
